#include "oracle.h"

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

namespace heapline::oracle {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const char* const kCallNames[kCallKinds] = {"alloc", "free", "realloc"};

Calls calls_of(const json& object) {
  Calls calls{};
  for (int k = 0; k < kCallKinds; ++k) calls[k] = object.at(kCallNames[k]).get<std::int64_t>();
  return calls;
}

std::string calls_text(const Calls& calls) {
  std::ostringstream text;
  text << "alloc " << calls[kAlloc] << ", free " << calls[kFree] << ", realloc " << calls[kRealloc];
  return text.str();
}

Calls plus(Calls a, const Calls& b, std::int64_t times = 1) {
  for (int k = 0; k < kCallKinds; ++k) a[k] += b[k] * times;
  return a;
}

Calls minus(Calls a, const Calls& b) {
  for (int k = 0; k < kCallKinds; ++k) a[k] -= b[k];
  return a;
}

json read_json_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return json::parse(text.str());
}

std::string status_text(int status) {
  std::ostringstream text;
  if (WIFEXITED(status)) text << "exit code " << WEXITSTATUS(status);
  else if (WIFSIGNALED(status)) text << "signal " << WTERMSIG(status);
  else text << "status " << status;
  return text.str();
}

// Problems of one process, prefixed with where they are.
class Problems {
 public:
  Problems(std::vector<std::string>& out, std::string prefix) : out_(out), prefix_(std::move(prefix)) {}
  std::ostringstream& add() {
    flush();
    pending_ = true;
    line_.str("");
    line_ << prefix_;
    return line_;
  }
  ~Problems() { flush(); }

 private:
  void flush() {
    if (pending_) out_.push_back(line_.str());
    pending_ = false;
  }
  std::vector<std::string>& out_;
  std::string prefix_;
  std::ostringstream line_;
  bool pending_ = false;
};

std::int64_t distance(std::int64_t a, std::int64_t b) { return a > b ? a - b : b - a; }

}  // namespace

Truth parse_truth(const json& j) {
  Truth t;
  t.pid = j.at("pid").get<int>();
  t.image = j.at("image").get<int>();
  t.role = j.at("role").get<std::string>();
  t.exec_into = j.at("exec_into").get<bool>();
  const json& heap = j.at("heap");
  t.heap_final = heap.at("final").get<std::int64_t>();
  t.heap_peak = heap.at("peak").get<std::int64_t>();
  t.peak_designed = heap.at("peak_designed").get<bool>();
  t.heap_inherited = heap.at("inherited").get<std::int64_t>();
  const json& mapped = j.at("mapped");
  t.mapped_final = mapped.at("final").get<std::int64_t>();
  t.mapped_peak = mapped.at("peak").get<std::int64_t>();
  t.mapped_inherited = mapped.at("inherited").get<std::int64_t>();
  t.calls = calls_of(j.at("calls"));
  t.threads_created = j.at("threads_created").get<std::int64_t>();
  t.threads_alive_high = j.at("threads_alive_high").get<std::int64_t>();
  t.parked_at_fork = j.at("parked_at_fork").get<std::int64_t>();
  t.parked_runtime_bytes = j.at("parked_runtime_bytes").get<std::int64_t>();
  for (const json& name : j.at("markers")) t.markers.push_back(name.get<std::string>());
  for (const json& child : j.at("children")) {
    t.children.push_back(ChildTruth{child.at("index").get<int>(), child.at("pid").get<int>(),
                                    child.at("kind").get<std::string>(), child.at("status").get<int>()});
  }
  return t;
}

Run load_run(const fs::path& dir, int root_pid, const std::string& mode) {
  Run run;
  run.mode = mode;
  run.root_pid = root_pid;
  std::set<std::string> unclaimed;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.ends_with(".live")) run.problems.push_back("a live file was left behind: " + entry.path().string());
    if (name.starts_with("truth.") || name.starts_with("r.")) unclaimed.insert(name);
  }
  std::vector<int> pending{root_pid};
  while (!pending.empty()) {
    const int pid = pending.back();
    pending.pop_back();
    Process process;
    process.pid = pid;
    for (int image = 0;; ++image) {
      const std::string name = "truth." + std::to_string(pid) + "." + std::to_string(image) + ".json";
      if (!fs::exists(dir / name)) break;
      unclaimed.erase(name);
      try {
        process.images.push_back(parse_truth(read_json_file(dir / name)));
      } catch (const std::exception& error) {
        run.problems.push_back("pid " + std::to_string(pid) + ": " + name + " is not a truth file: " + error.what());
        break;
      }
    }
    if (process.images.empty()) {
      run.problems.push_back("pid " + std::to_string(pid) + ": no truth file (the workload did not finish)");
      continue;
    }
    if (process.last().exec_into) {
      run.problems.push_back("pid " + std::to_string(pid) + ": image " + std::to_string(process.last().image) +
                             " exec'd, but the next image wrote no truth");
    }
    const std::string report = "r." + std::to_string(pid) + ".json";
    unclaimed.erase(report);
    if (fs::exists(dir / report)) {
      try {
        process.report = read_json_file(dir / report);
        process.has_report = true;
      } catch (const std::exception& error) {
        run.problems.push_back("pid " + std::to_string(pid) + ": " + report + " is not JSON: " + error.what());
      }
    } else {
      run.problems.push_back("pid " + std::to_string(pid) + ": no report " + report);
    }
    for (const Truth& image : process.images) {
      for (const ChildTruth& child : image.children) {
        if (child.status != 0) {
          run.problems.push_back("pid " + std::to_string(child.pid) + " (child " + std::to_string(child.index) +
                                 " of " + std::to_string(pid) + ") ended with " + status_text(child.status));
        }
        pending.push_back(child.pid);
      }
    }
    run.processes.emplace(pid, std::move(process));
  }
  for (const std::string& name : unclaimed) {
    if (!name.ends_with(".tmp")) run.problems.push_back("a file no process of the tree claims: " + name);
  }
  return run;
}

Runtime derive_runtime(const Run& calibration, std::vector<std::string>& problems) {
  Runtime runtime;
  auto root_entry = calibration.processes.find(calibration.root_pid);
  if (root_entry == calibration.processes.end() || !root_entry->second.has_report) {
    problems.push_back("calibration: no report of the root");
    return runtime;
  }
  const Process& root = root_entry->second;
  const Truth& root_truth = root.last();
  const Process* parked_child = nullptr;
  const Process* exec_child = nullptr;
  for (const ChildTruth& child : root_truth.children) {
    auto entry = calibration.processes.find(child.pid);
    if (entry == calibration.processes.end() || !entry->second.has_report) continue;
    (child.kind == "fork" ? parked_child : exec_child) = &entry->second;
  }
  if (parked_child == nullptr || exec_child == nullptr || root_truth.threads_created != 1 ||
      parked_child->last().parked_at_fork != 1) {
    problems.push_back("calibration: the tree is not the one --calibrate makes (a thread, a fork while it waits, "
                       "a fork that execs)");
    return runtime;
  }
  auto final_of = [](const Process& p) { return p.report.at("final_bytes").get<std::int64_t>(); };
  auto calls_in = [](const Process& p) { return calls_of(p.report.at("calls")); };
  // A fresh image (the exec'd one): what is not the workload's is the runtime's.
  runtime.fresh_bytes = final_of(*exec_child) - exec_child->last().heap_final;
  runtime.fresh_calls = minus(calls_in(*exec_child), exec_child->last().calls);
  // The root: the same, and one thread created and joined.
  runtime.thread_calls = minus(minus(calls_in(root), root_truth.calls), runtime.fresh_calls);
  const std::int64_t root_bytes = final_of(root) - root_truth.heap_final;
  if (root_bytes != runtime.fresh_bytes) {
    problems.push_back("calibration: the root's runtime holds " + std::to_string(root_bytes) +
                       " bytes at exit, a fresh exec'd image " + std::to_string(runtime.fresh_bytes) +
                       ": the runtime's share is not a constant");
  }
  // The fork child: its parent's runtime plus the DTV of the thread that
  // waited at the barrier.
  runtime.parked_bytes = final_of(*parked_child) - parked_child->last().heap_final - runtime.fresh_bytes;
  if (runtime.parked_bytes != parked_child->last().parked_runtime_bytes) {
    problems.push_back("calibration: the fork child keeps " + std::to_string(runtime.parked_bytes) +
                       " runtime bytes of the thread waiting at the fork, the workload read " +
                       std::to_string(parked_child->last().parked_runtime_bytes) + " (its DTV)");
  }
  runtime.fork_calls = minus(calls_in(*parked_child), parked_child->last().calls);
  for (int k = 0; k < kCallKinds; ++k) {
    if (runtime.fresh_calls[k] < 0 || runtime.thread_calls[k] < 0 || runtime.fork_calls[k] < 0) {
      problems.push_back("calibration: the library counted fewer calls than the workload made (fresh " +
                         calls_text(runtime.fresh_calls) + "; per thread " + calls_text(runtime.thread_calls) +
                         "; fork child " + calls_text(runtime.fork_calls) + ")");
      break;
    }
  }
  if (runtime.fresh_bytes < 0 || runtime.parked_bytes < 0) {
    problems.push_back("calibration: negative runtime bytes (fresh " + std::to_string(runtime.fresh_bytes) +
                       ", per parked thread " + std::to_string(runtime.parked_bytes) + ")");
  }
  return runtime;
}

std::map<int, Expectation> expectations(const Run& run, const Runtime& runtime) {
  std::map<int, Expectation> result;
  // (pid, name, the runtime bytes of the parent image at the fork)
  struct Visit {
    int pid;
    std::string name;
    std::int64_t parent_bytes;
  };
  std::vector<Visit> pending{{run.root_pid, "root", 0}};
  while (!pending.empty()) {
    const Visit visit = pending.back();
    pending.pop_back();
    auto entry = run.processes.find(visit.pid);
    if (entry == run.processes.end()) continue;
    const Process& process = entry->second;
    for (const Truth& image : process.images) {
      // A fork child's first image holds its parent's runtime blocks, and
      // the DTV of every thread that was waiting at the fork; an exec'd
      // image starts afresh.
      const bool forked = image.image == 0 && image.role == "fork";
      const std::int64_t bytes = forked ? visit.parent_bytes + image.parked_runtime_bytes : runtime.fresh_bytes;
      // "root#1" is the root's second image (after an exec).
      std::string image_name = visit.name;
      if (image.image > 0) image_name.append("#").append(std::to_string(image.image));
      for (const ChildTruth& child : image.children) {
        std::string name = image_name;
        name.append("/").append(child.kind).append(std::to_string(child.index));
        pending.push_back({child.pid, name, bytes});
      }
      if (&image == &process.last()) {
        Expectation& expected = result[visit.pid];
        expected.name = image_name;
        expected.runtime_bytes = bytes;
        expected.runtime_calls =
            plus(forked ? runtime.fork_calls : runtime.fresh_calls, runtime.thread_calls, image.threads_created);
      }
    }
  }
  return result;
}

std::vector<std::string> check_process(const Process& process, const Expectation& expected, bool exact,
                                       bool designed) {
  std::vector<std::string> out;
  Problems problems(out, "[" + std::string(exact ? "exact" : "batched") + "] " + expected.name + " (pid " +
                             std::to_string(process.pid) + "): ");
  const Truth& truth = process.last();
  const json& r = process.report;
  try {
    if (r.value("format", "") != "heapline/1") problems.add() << "the report's format is not heapline/1";
    if (r.at("pid").get<int>() != process.pid) problems.add() << "the report names pid " << r.at("pid");
    if (r.value("ended", "") != "exit") problems.add() << "ended " << r.value("ended", "?") << ", not exit";
    if (!r.value("allocations_seen", false)) problems.add() << "allocations_seen is not true";

    if (designed && !truth.peak_designed) problems.add() << "the workload could not allocate its designed peak";
    const std::int64_t runtime = expected.runtime_bytes;
    const json& precision = r.at("precision");
    const std::int64_t bound = precision.at("bound_bytes").get<std::int64_t>();
    const std::int64_t max_threads = precision.at("max_threads").get<std::int64_t>();
    if (exact) {
      if (precision.at("mode") != "exact" || bound != 0) problems.add() << "exact run states " << precision.dump();
    } else {
      if (precision.at("mode") != "batched") problems.add() << "batched run states mode " << precision.at("mode");
      // The budget's rule: the stated bound within max(floor, peak / divisor).
      const std::int64_t budget = precision.at("budget_bytes").get<std::int64_t>();
      const std::int64_t divisor = precision.at("budget_divisor").get<std::int64_t>();
      const std::int64_t floor = precision.at("budget_floor_bytes").get<std::int64_t>();
      const std::int64_t reported_peak = r.at("peak_bytes").get<std::int64_t>();
      if (divisor <= 0 || budget != std::max(floor, reported_peak / divisor)) {
        problems.add() << "budget_bytes " << budget << " is not max(budget_floor_bytes, peak_bytes / budget_divisor)";
      }
      if (bound > budget) problems.add() << "bound_bytes " << bound << " is above budget_bytes " << budget;
      if (bound > max_threads * precision.at("max_threshold_bytes").get<std::int64_t>()) {
        problems.add() << "bound_bytes " << bound << " is above max_threads x max_threshold_bytes";
      }
    }
    if (max_threads > truth.threads_alive_high) {
      problems.add() << "max_threads " << max_threads << " but at most " << truth.threads_alive_high
                     << " threads were alive at once";
    }

    // Heap: the final figure is exact; the peak is the designed one.
    const std::int64_t final_bytes = r.at("final_bytes").get<std::int64_t>();
    if (final_bytes != runtime + truth.heap_final) {
      problems.add() << "final_bytes " << final_bytes << " != " << runtime + truth.heap_final << " (workload "
                     << truth.heap_final << " + runtime " << runtime << "), off by "
                     << final_bytes - runtime - truth.heap_final;
    }
    const std::int64_t peak = r.at("peak_bytes").get<std::int64_t>();
    const std::int64_t true_peak = runtime + truth.heap_peak;
    if (truth.peak_designed) {
      if (exact && peak != true_peak) {
        problems.add() << "peak_bytes " << peak << " != the designed peak " << true_peak << " (off by "
                       << peak - true_peak << ")";
      }
      if (!exact && distance(peak, true_peak) > bound) {
        problems.add() << "peak_bytes " << peak << " is " << peak - true_peak << " from the designed peak "
                       << true_peak << ", beyond the stated bound " << bound;
      }
    }
    if (peak < final_bytes) problems.add() << "peak_bytes " << peak << " below final_bytes " << final_bytes;

    // Mapped memory: exact in both precisions.
    const json& mapped = r.at("mapped");
    if (mapped.at("mode") != "on") problems.add() << "mapped mode " << mapped.at("mode");
    const std::int64_t mapped_final = mapped.at("final_bytes").get<std::int64_t>();
    const std::int64_t mapped_peak = mapped.at("peak_bytes").get<std::int64_t>();
    if (mapped_final != truth.mapped_final) {
      problems.add() << "mapped final_bytes " << mapped_final << " != " << truth.mapped_final << " the workload mapped";
    }
    if (truth.peak_designed && mapped_peak != truth.mapped_peak) {
      problems.add() << "mapped peak_bytes " << mapped_peak << " != the designed " << truth.mapped_peak;
    }
    if (mapped.at("untracked").get<std::int64_t>() != 0) problems.add() << "mapped untracked " << mapped.at("untracked");

    // Heap + mapped: their peak is the designed moment too.
    const json& total = r.at("total");
    const std::int64_t total_peak = total.at("peak_bytes").get<std::int64_t>();
    if (total.at("final_bytes").get<std::int64_t>() != final_bytes + mapped_final) {
      problems.add() << "total final_bytes " << total.at("final_bytes") << " != heap + mapped "
                     << final_bytes + mapped_final;
    }
    if (truth.peak_designed) {
      const std::int64_t true_total = true_peak + truth.mapped_peak;
      if (exact ? total_peak != true_total : distance(total_peak, true_total) > bound) {
        problems.add() << "total peak_bytes " << total_peak << " is " << total_peak - true_total
                       << " from the designed " << true_total << " (bound " << bound << ")";
      }
    }
    if (total_peak < peak || total_peak < mapped_peak) {
      problems.add() << "total peak_bytes " << total_peak << " below the heap's " << peak << " or the mapped "
                     << mapped_peak;
    }

    // Calls: every one the workload made, and the runtime's.
    const Calls reported = calls_of(r.at("calls"));
    const Calls wanted = plus(truth.calls, expected.runtime_calls);
    if (reported != wanted) {
      problems.add() << "calls " << calls_text(reported) << " != " << calls_text(wanted) << " (workload "
                     << calls_text(truth.calls) << " + runtime " << calls_text(expected.runtime_calls) << ")";
    }

    // Times.
    const std::uint64_t duration = r.at("duration_ns").get<std::uint64_t>();
    for (const char* field : {"peak_time_ns"}) {
      if (r.at(field).get<std::uint64_t>() > duration) problems.add() << field << " after duration_ns";
    }
    if (mapped.at("peak_time_ns").get<std::uint64_t>() > duration) problems.add() << "mapped peak_time_ns after duration_ns";
    if (total.at("peak_time_ns").get<std::uint64_t>() > duration) problems.add() << "total peak_time_ns after duration_ns";

    // The series: time order, peaks above every sample, one mapped sample
    // for each heap sample (each pair ends the same interval, each at its
    // own series' time), the last sample at the final figures.
    const json& heap_samples = r.at("samples");
    const json& mapped_samples = r.at("mapped_samples");
    // Each series reaches its peak: a spike between two samples is kept as
    // the interval's maximum, and a merge keeps the larger.
    auto check_series = [&](const json& samples, const char* series, std::int64_t series_peak) {
      std::uint64_t previous = 0;
      std::int64_t highest = 0;
      for (std::size_t i = 0; i < samples.size(); ++i) {
        const std::uint64_t t = samples[i].at(0).get<std::uint64_t>();
        const std::int64_t live = samples[i].at(1).get<std::int64_t>();
        const std::int64_t max_live = samples[i].at(2).get<std::int64_t>();
        if (t < previous) {
          problems.add() << series << " sample " << i << " at " << t << " ns, before the previous one at " << previous;
        }
        previous = t;
        if (t > duration) problems.add() << series << " sample " << i << " at " << t << " ns, after duration_ns";
        if (max_live < live) problems.add() << series << " sample " << i << ": max " << max_live << " below live " << live;
        if (max_live > series_peak) {
          problems.add() << series << " sample " << i << " reaches " << max_live << ", above the peak " << series_peak;
        }
        highest = std::max(highest, max_live);
      }
      if (!samples.empty() && highest != series_peak) {
        problems.add() << "the " << series << " samples reach " << highest << " at most, not the peak " << series_peak;
      }
    };
    check_series(heap_samples, "heap", peak);
    check_series(mapped_samples, "mapped", mapped_peak);
    if (heap_samples.empty()) {
      problems.add() << "no heap sample";
    } else {
      const json& last = heap_samples.back();
      if (last.at(1).get<std::int64_t>() != final_bytes) {
        problems.add() << "the last heap sample holds " << last.at(1) << ", not final_bytes " << final_bytes;
      }
      // A fork child starts from what it inherited, exactly (its sample at
      // 0 ns; a full timeline merges it with the next).
      if (truth.role == "fork" && truth.image == 0 && heap_samples.front().at(0).get<std::uint64_t>() == 0) {
        const std::int64_t inherited = runtime + truth.heap_inherited;
        if (heap_samples.front().at(1).get<std::int64_t>() != inherited) {
          problems.add() << "the first heap sample holds " << heap_samples.front().at(1) << ", not the inherited "
                         << inherited << " (workload " << truth.heap_inherited << " + runtime " << runtime << ")";
        }
      }
    }
    if (mapped_samples.size() != heap_samples.size()) {
      problems.add() << mapped_samples.size() << " mapped samples for " << heap_samples.size() << " heap samples";
    } else {
      for (std::size_t i = 0; i < heap_samples.size(); ++i) {
        const std::int64_t sum = heap_samples[i].at(1).get<std::int64_t>() + mapped_samples[i].at(1).get<std::int64_t>();
        if (sum > total_peak) {
          problems.add() << "sample " << i << ": heap + mapped " << sum << " above the total peak " << total_peak;
          break;
        }
      }
      if (!mapped_samples.empty() && mapped_samples.back().at(1).get<std::int64_t>() != mapped_final) {
        problems.add() << "the last mapped sample holds " << mapped_samples.back().at(1) << ", not the final "
                       << mapped_final;
      }
    }

    // Markers: the names the workload set, each thread's in its order.
    std::multiset<std::string> reported_names, truth_names(truth.markers.begin(), truth.markers.end());
    std::map<std::string, std::pair<long, std::uint64_t>> last_of_thread;  // thread -> (sequence, time)
    static const std::regex thread_marker(R"(m\.(\d+)\.(\d+))");
    for (const json& marker : r.at("markers")) {
      const std::uint64_t t = marker.at(0).get<std::uint64_t>();
      const std::string name = marker.at(1).get<std::string>();
      reported_names.insert(name);
      if (t > duration) problems.add() << "marker " << name << " at " << t << " ns, after duration_ns";
      std::smatch match;
      if (std::regex_match(name, match, thread_marker)) {
        const long sequence = std::stol(match[2]);
        auto [it, fresh] = last_of_thread.try_emplace(match[1], sequence, t);
        if (!fresh) {
          const bool later = sequence > it->second.first;
          if ((later && t < it->second.second) || (!later && t > it->second.second)) {
            problems.add() << "marker " << name << " at " << t << " ns is out of its thread's order";
          }
          if (later) it->second = {sequence, t};
        }
      }
    }
    if (reported_names != truth_names) {
      problems.add() << reported_names.size() << " markers reported, " << truth_names.size()
                     << " set by the workload, or not the same names";
    }
  } catch (const std::exception& error) {
    problems.add() << "the report lacks a field or has one of the wrong type: " << error.what();
  }
  return out;
}

std::vector<std::string> check_run(const Run& run, const Runtime& runtime) {
  std::vector<std::string> out;
  for (const std::string& problem : run.problems) out.push_back("[" + run.mode + "] " + problem);
  const auto expected = expectations(run, runtime);
  for (const auto& [pid, process] : run.processes) {
    if (!process.has_report) continue;
    auto entry = expected.find(pid);
    if (entry == expected.end()) continue;
    const std::uint64_t duration = process.report.value("duration_ns", std::uint64_t{0});
    if (run.elapsed_ns != 0 && duration > run.elapsed_ns) {
      out.push_back("[" + run.mode + "] " + entry->second.name + " (pid " + std::to_string(pid) + "): duration_ns " +
                    std::to_string(duration) + " but the whole run took " + std::to_string(run.elapsed_ns) + " ns");
    }
    for (std::string& problem :
         check_process(process, entry->second, run.mode != "batched", run.mode != "calibration")) {
      out.push_back(std::move(problem));
    }
  }
  return out;
}

std::vector<std::string> check_pair(const Run& batched, const Run& exact, const Runtime& runtime) {
  std::vector<std::string> out;
  struct Named {
    const Process* process;
    Expectation expected;
  };
  auto by_name = [&](const Run& run) {
    std::map<std::string, Named> named;
    for (const auto& [pid, expected] : expectations(run, runtime)) {
      auto entry = run.processes.find(pid);
      if (entry != run.processes.end() && entry->second.has_report) named[expected.name] = {&entry->second, expected};
    }
    return named;
  };
  const auto b = by_name(batched), e = by_name(exact);
  for (const auto& [name, named] : b) {
    if (!e.contains(name)) out.push_back("[pair] " + name + " ran in the batched run only: the trees differ");
  }
  for (const auto& [name, e_named] : e) {
    auto entry = b.find(name);
    if (entry == b.end()) {
      out.push_back("[pair] " + name + " ran in the exact run only: the trees differ");
      continue;
    }
    const Named& b_named = entry->second;
    Problems problems(out, "[pair] " + name + ": ");
    const Truth &bt = b_named.process->last(), &et = e_named.process->last();
    if (bt.calls != et.calls) {
      problems.add() << "the workload made " << calls_text(bt.calls) << " calls batched, " << calls_text(et.calls)
                     << " exact: it is not deterministic";
    }
    try {
      const json &br = b_named.process->report, &er = e_named.process->report;
      // What each run held for sure: the workload's blocks and the
      // runtime's (glibc's chunk sizes may differ by a few bytes between
      // runs, so "equal" is: apart by exactly what the truths are apart).
      const std::int64_t b_held = bt.heap_final + b_named.expected.runtime_bytes;
      const std::int64_t e_held = et.heap_final + e_named.expected.runtime_bytes;
      const std::int64_t b_final = br.at("final_bytes").get<std::int64_t>(), e_final = er.at("final_bytes").get<std::int64_t>();
      if (b_final - e_final != b_held - e_held) {
        problems.add() << "final_bytes " << b_final << " batched, " << e_final << " exact, apart by "
                       << b_final - e_final << "; the runs held " << b_held << " and " << e_held;
      }
      // |batched peak - exact peak| within the stated bound, each taken
      // from its own run's designed peak.
      const std::int64_t bound = br.at("precision").at("bound_bytes").get<std::int64_t>();
      const std::int64_t b_peak = br.at("peak_bytes").get<std::int64_t>(), e_peak = er.at("peak_bytes").get<std::int64_t>();
      const std::int64_t b_true = bt.heap_peak + b_named.expected.runtime_bytes;
      const std::int64_t e_true = et.heap_peak + e_named.expected.runtime_bytes;
      if (bt.peak_designed && et.peak_designed && distance(b_peak - b_true, e_peak - e_true) > bound) {
        problems.add() << "peak_bytes " << b_peak << " batched, " << e_peak << " exact (true peaks " << b_true
                       << " and " << e_true << "): apart by more than the bound " << bound;
      }
      if (calls_of(br.at("calls")) != calls_of(er.at("calls"))) {
        problems.add() << "calls " << calls_text(calls_of(br.at("calls"))) << " batched, "
                       << calls_text(calls_of(er.at("calls"))) << " exact";
      }
    } catch (const std::exception& error) {
      problems.add() << "a report lacks a field: " << error.what();
    }
  }
  return out;
}

}  // namespace heapline::oracle
