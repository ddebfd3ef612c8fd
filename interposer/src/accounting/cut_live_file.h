// A live file cut under its running process (cut_live_file.cpp): another
// process truncated it (`: > x.live`, a log rotator's copytruncate, a
// cleanup script). The kernel drops the pages past the new end: what they
// held is gone. os.h's guard (guard_cut_mapping) puts zeroed memory in their
// place as they are met, so that no store or load of the library's kills
// the host; this keeps the heap line true about the loss: the samples,
// markers and profile that were there are dropped, never read as zeros,
// and the loss is said once on stderr and in the report's
// live_file_problem.
#pragma once

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// The live file just mapped at g_region is guarded (nothing is, while
// g_region is the static region). `fresh`: a new heap line (init, fork
// child, a deferred creation), whose record of losses starts empty; false
// for the file remade after a failed exec, which keeps the losses of the
// one it replaces.
void guard_live_file(bool fresh);
// g_region is about to be unmapped (a fork child's copy of its parent's).
void unguard_live_file();
// With the sampling lock held. Before a sample: when a page of the live
// file was met cut (one load otherwise), the pages past its end are
// replaced and what they held is dropped from the series, with one line on
// stderr the first time. `everything`: looked for whether or not a page was
// met (at exit, which reads every series; before the file is remade after a
// failed exec), and any sample that a merge made from zeroed pages (going
// back in time) dropped too.
void settle_cut_live_file(bool everything);
// At exit, after the last settle: the report's live_file_problem says what
// a cut lost (when the live file was cut and nothing else was said).
void describe_cut_live_file();
// False when a cut lost mapped samples beside heap samples it left: the
// report then has no mapped series (its mapped figures are exact all the
// same).
bool mapped_series_kept();

}  // namespace heapline::accounting
#pragma GCC visibility pop
