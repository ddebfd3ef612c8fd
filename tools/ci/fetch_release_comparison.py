#!/usr/bin/python3
"""tools/ci/fetch_release_comparison.py

The docs' release table reads the newest release's own report: this takes
the comparison's raw data that the release workflow attached to the latest
GitHub release (heapline-X.Y.Z-comparison.json) and puts it where
`heapline-bench render` reads the docs' comparison from,
docs/release-comparison.json of the checkout ($HEAPLINE_REPO_DIR, default
this one), so the site's table is that release's. Run by the site job of
the performance workflow before the docs are built; it changes the checkout's
copy only, never the repository.

Before the first release (the API answers 404), or when the latest release
has no comparison attached, the tracked file stays and a notice says so. An
attached file that is not a release comparison (heapline-comparison/1) is an
error: the site would show a table no release measured.

Environment: GITHUB_API_URL (default https://api.github.com; a local stand-in
in the tests), GITHUB_REPOSITORY (owner/name), GITHUB_TOKEN (optional: the
API's rate limit is per token, and a shared runner's address shares it).
"""
import json
import os
import pathlib
import re
import sys
import urllib.error
import urllib.request

NAME = "fetch_release_comparison"


def say(message):
    print(f"{NAME}: {message}", file=sys.stderr)


def die(message):
    # An ::error:: line is an annotation on the run's page in GitHub Actions.
    prefix = "::error::" if os.environ.get("GITHUB_ACTIONS") == "true" else "error: "
    print(f"{prefix}{NAME}: {message}", file=sys.stderr)
    sys.exit(1)


def get(url, api):
    request = urllib.request.Request(url)
    token = os.environ.get("GITHUB_TOKEN", "")
    # The token goes to the API only, never to the host a download is
    # redirected to.
    if api:
        request.add_header("Accept", "application/vnd.github+json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.read()


def main():
    repository = os.environ.get("GITHUB_REPOSITORY", "")
    if not re.fullmatch(r"[\w.-]+/[\w.-]+", repository):
        die(f"GITHUB_REPOSITORY is '{repository}', not OWNER/NAME")
    api = os.environ.get("GITHUB_API_URL") or "https://api.github.com"
    repo_dir = pathlib.Path(os.environ.get("HEAPLINE_REPO_DIR") or pathlib.Path(__file__).resolve().parents[2])
    target = repo_dir / "docs" / "release-comparison.json"

    try:
        release = json.loads(get(f"{api}/repos/{repository}/releases/latest", api=True))
    except urllib.error.HTTPError as error:
        if error.code == 404:
            say(f"{repository} has no release yet: the docs keep {target.relative_to(repo_dir)}")
            return 0
        die(f"the latest release of {repository}: {error}")
    except (urllib.error.URLError, OSError, ValueError) as error:
        die(f"the latest release of {repository}: {error}")
    tag = release.get("tag_name", "")
    wanted = f"heapline-{tag.removeprefix('v')}-comparison.json"
    assets = [a for a in release.get("assets") or [] if a.get("name") == wanted]
    if not assets:
        print(f"::notice::{NAME}: the latest release {tag} has no {wanted} attached: the docs keep "
              f"{target.relative_to(repo_dir)}", file=sys.stderr)
        return 0
    try:
        data = get(assets[0]["browser_download_url"], api=False)
        comparison = json.loads(data)
    except (urllib.error.URLError, OSError, ValueError) as error:
        die(f"{wanted} of {tag}: {error}")
    if not isinstance(comparison, dict) or comparison.get("schema") != "heapline-comparison/1":
        die(f"{wanted} of {tag} is not a release comparison (schema heapline-comparison/1)")
    target.write_bytes(data)
    say(f"the docs' release table is {tag}'s: {wanted} written to {target.relative_to(repo_dir)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
