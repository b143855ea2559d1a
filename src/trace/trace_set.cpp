#include "trace/trace_set.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <ctime>
#include <limits>
#include <map>
#include <set>
#include <tuple>
#include <thread>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/byte_codec.hpp"
#include "common/parallel.hpp"
#include "common/text.hpp"
#include "distribute/process_group.hpp"
#include "common/user_regex.hpp"
#include "common/walk.hpp"
#include "trace/gpu_peaks.hpp"
#include "trace/trace_cache.hpp"

namespace scalelens::trace {
namespace fs = std::filesystem;

namespace {

constexpr std::size_t kSniffBytes = 64 * 1024;

bool sniff_kineto(const fs::path& p) {
  if (has_kineto_file_name(p)) return true;  // analysed, so an empty or unreadable one is named
  auto head = read_head_inflated(p, kSniffBytes);
  if (!head) return false;
  return looks_like_kineto(head.value());
}

Across across(const std::vector<RankSummary>& ranks, double (*get)(const RankSummary&)) {
  Across a;
  int n = 0;
  for (const auto& r : ranks) {
    double v = get(r);
    if (std::isnan(v)) continue;
    if (n == 0 || v < a.min) {
      a.min = v;
      a.min_rank = r.rank;
    }
    if (n == 0 || v > a.max) {
      a.max = v;
      a.max_rank = r.rank;
    }
    a.mean += v;
    ++n;
  }
  if (n) a.mean /= n;
  a.ranks = n;
  return a;
}

// The first process's list of traces (and their sizes) to the others of a group.
void share_files(ProcessGroup& group, std::vector<fs::path>& files, std::vector<std::uintmax_t>& sizes) {
  std::vector<std::string> paths;
  for (const auto& f : files) paths.push_back(f.string());
  std::string bytes;
  ByteWriter writer(bytes);
  writer(paths, sizes);
  group.broadcast(bytes);
  ByteReader in(bytes);
  in(paths, sizes);
  if (!in.ok() || !in.at_end() || paths.size() != sizes.size()) group.abort("the list of traces from process 0 arrived garbled");
  files.assign(paths.begin(), paths.end());
}

// A file's summary (the cache's JSON, which leaves out where it was read from) or why it could not be analysed, between processes.
std::string encode_result(const Result<RankSummary>& r) {
  std::string bytes;
  ByteWriter out(bytes);
  if (r) out(std::uint8_t{1}, r->cached, r->file, summary_to_json(r.value()));
  else out(std::uint8_t{0}, r.error().message, r.error().path, r.error().line);
  return bytes;
}

std::optional<Result<RankSummary>> decode_result(std::string_view bytes) {
  ByteReader in(bytes);
  std::uint8_t ok = 0;
  in(ok);
  if (ok) {
    bool cached = false;
    std::string file, json;
    in(cached, file, json);
    auto summary = in.ok() && in.at_end() ? summary_from_json(json) : std::nullopt;
    if (!summary) return std::nullopt;
    summary->cached = cached;
    summary->file = std::move(file);
    return Result<RankSummary>(std::move(*summary));
  }
  Error e;
  in(e.message, e.path, e.line);
  if (!in.ok() || !in.at_end()) return std::nullopt;
  return Result<RankSummary>(std::move(e));
}

}  // namespace

std::vector<fs::path> find_traces(const std::vector<fs::path>& inputs, std::vector<Diagnostic>& diagnostics) {
  std::vector<fs::path> files;
  std::vector<FileIdentity> identities;  // per file, with the input that reached it
  auto add = [&](fs::path file, std::size_t input) {
    identities.push_back(file_identity(file.native(), input));
    files.push_back(std::move(file));
  };
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const fs::path& input = inputs[k];
    std::error_code ec;
    auto st = fs::status(input, ec);
    if (ec || !fs::exists(st)) {
      diagnostics.push_back(unreachable_input(input, ec));
      continue;
    }
    if (!fs::is_directory(st)) {
      add(input, k);
      continue;
    }
    std::vector<fs::path> found;
    std::vector<UnreadableFolder> unreadable;
    std::vector<FolderLeftOut> reached_again;
    walk_tree(input, [&](const fs::directory_entry& e) {
      std::error_code e2;
      if (e.path().filename() == kCacheFolder) return false;  // summaries of earlier versions, never traces
      if (e.is_directory(e2)) return true;
      if (e.is_regular_file(e2) && sniff_kineto(e.path())) found.push_back(e.path());
      return false;
    }, &unreadable, &reached_again);
    for (auto& d : left_out_diagnostics(reached_again)) diagnostics.push_back(std::move(d));
    for (const auto& u : unreadable)
      diagnostics.push_back({Severity::warning, "unreadable-folder", u.reason + "; traces in it are left out", u.path.string(), 0, {}});
    if (!unreadable.empty())
      diagnostics.push_back({Severity::warning, "unreadable-folders",
                             fmt::format("{} folder{} under this input could not be read", unreadable.size(), unreadable.size() == 1 ? "" : "s"),
                             input.string(), 0, {}});
    if (found.empty())
      diagnostics.push_back({Severity::warning, "no-traces", "no Kineto trace (Chrome-trace JSON: an object with \"traceEvents\", or an array of events) in this folder", input.string(), 0, {}});
    std::sort(found.begin(), found.end());
    for (auto& f : found) add(std::move(f), k);
  }
  // A trace reached under two spellings (`traces` and `$PWD/traces`) is one rank's, read once.
  std::vector<std::string> input_names;
  for (const auto& input : inputs) input_names.push_back(input.string());
  drop_files_reached_twice(files, identities, input_names, diagnostics,
                           [](const fs::path& f) -> std::string_view { return f.native(); });
  std::sort(files.begin(), files.end());
  files.erase(std::unique(files.begin(), files.end()), files.end());
  return files;
}

TraceSet analyse_traces(const TraceSetOptions& options) {
  TraceSet set;
  CommMatcher matcher;
  if (!options.comm_kernel_regex.empty()) {
    auto regex = UserRegex::compile(options.comm_kernel_regex, "--comm-kernel-regex");
    if (!regex) {
      set.diagnostics.push_back({Severity::error, "bad-regex", regex.error().message, {}, 0, {}});
      return set;
    }
    matcher = CommMatcher(std::move(regex.value()));
  }
  // The first process of a group finds the traces; the others get its list.
  ProcessGroup& group = options.group ? *options.group : single_process();
  std::vector<fs::path> files;
  std::vector<std::uintmax_t> sizes;
  if (group.rank() == 0) {
    files = find_traces(options.inputs, set.diagnostics);
    // Shared out by content, not by size on disk: a gzipped trace is ~8-20 times its file.
    for (const auto& f : files) {
      std::error_code ec;
      auto size = fs::file_size(f, ec);
      sizes.push_back(ec ? 0 : content_size_estimate(f, size));
    }
  }
  if (group.size() > 1) share_files(group, files, sizes);
  set.files_considered = files.size();

  // Threads for this process's share: one file per thread when it has as many files as cores, and
  // the spare cores parse slices of its files when it has fewer.
  const unsigned cores = default_threads(options.threads);
  const std::size_t my_files = group.size() > 1 ? share_of(group, sizes).mine.size() : files.size();
  const unsigned threads = static_cast<unsigned>(std::min<std::size_t>(cores, std::max<std::size_t>(1, my_files)));
  // Fewer files than cores: the rest parse slices of each file.
  ParseOptions parse;
  parse.threads = std::max(1u, cores / threads);
  const CacheOptions cache{options.cache, options.cache_dir};
  SharedWork<Result<RankSummary>> work;
  work.sizes = sizes;
  work.threads = threads;
  // A trace named on the command line may be a pipe; one found in a folder may not (it was a
  // regular file when listed: a pipe there now is refused, not waited on).
  auto named = [&](const fs::path& f) {
    return std::any_of(options.inputs.begin(), options.inputs.end(), [&](const fs::path& in) { return in == f; });
  };
  work.work = [&](std::size_t i) {
    ParseOptions mine = parse;
    mine.may_be_a_pipe = named(files[i]);
    return analyse_file(files[i], matcher, options.comm_kernel_regex, cache, mine);
  };
  work.name = [&](std::size_t i) { return files[i].string(); };
  work.names_are_files = true;
  work.encode = encode_result;
  work.decode = decode_result;
  auto analysed = shared_for(group, work);
  if (group.rank() != 0) return set;  // rank 0 has every file's summary and says what a single process would

  std::vector<std::optional<RankSummary>> results(files.size());
  std::vector<std::optional<Error>> errors(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (!*analysed[i]) errors[i] = analysed[i]->error();
    else results[i] = std::move(analysed[i]->value());
  }
  analysed.clear();

  for (std::size_t i = 0; i < files.size(); ++i) {
    if (errors[i]) {
      set.diagnostics.push_back({Severity::error, "bad-trace", errors[i]->message,
                                 errors[i]->path.empty() ? files[i].string() : errors[i]->path, 0, {}});
      continue;
    }
    for (const auto& w : results[i]->warnings)
      set.diagnostics.push_back({Severity::warning, "trace", w, results[i]->file, 0, {}});
    if (results[i]->cached) ++set.files_cached;
    set.ranks.push_back(std::move(*results[i]));
  }
  set.peak_tflops_override = options.peak_tflops;
  set.peak_tbps_override = options.peak_tbps;
  // Said of the set as a whole: of the one folder or file given, else of no one path.
  const std::string inputs = options.inputs.size() == 1 ? options.inputs.front().string() : std::string();
  // Traces of several jobs (a rerun's beside the first run's) are told apart as `scalelens report`
  // tells them (per world size, backend and GPU, by when profiling began) and analysed apart: one
  // job's ranks compared with another's would make stragglers and waits of a clock difference.
  std::map<std::tuple<int, std::string, std::string>, std::vector<std::size_t>> setups;
  for (std::size_t i = 0; i < set.ranks.size(); ++i)
    setups[{set.ranks[i].world_size.value_or(0), set.ranks[i].backend, set.ranks[i].device}].push_back(i);
  std::vector<std::vector<std::size_t>> jobs;
  std::vector<std::string> unsure;
  for (const auto& [setup, members] : setups) {
    std::vector<TraceStart> starts;
    for (std::size_t i : members) starts.push_back({set.ranks[i].rank, set.ranks[i].start_ns, &set.ranks[i].step_numbers, set.ranks[i].file,
                                          set.ranks[i].base_time_ns});
    for (const auto& job : split_into_jobs(starts, std::get<0>(setup), &unsure)) {
      jobs.emplace_back();
      for (std::size_t k : job) jobs.back().push_back(members[k]);
    }
  }
  for (auto& said : unsure) set.diagnostics.push_back({Severity::warning, "late-ranks-ambiguous", std::move(said), inputs, 0, {}});
  // Traces whose clock gives no start (or no GPU work) cannot be told apart by it: one job unless
  // at least two jobs began at known times.
  const auto timed = std::count_if(jobs.begin(), jobs.end(), [&](const auto& job) { return set.ranks[job.front()].start_ns.has_value(); });
  if (timed < 2) {
    analyse_job(set, options, inputs);
    return set;
  }
  std::string which;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    TraceSet job;
    job.peak_tflops_override = set.peak_tflops_override;
    job.peak_tbps_override = set.peak_tbps_override;
    for (std::size_t i : jobs[j]) job.ranks.push_back(std::move(set.ranks[i]));  // set.ranks is refilled from the jobs
    for (const auto& r : job.ranks)
      if (r.start_ns) job.start_ns = job.start_ns ? std::min(*job.start_ns, *r.start_ns) : *r.start_ns;
    analyse_job(job, options, inputs);
    for (auto d : job.diagnostics) {  // said of the whole set as well, naming the job
      d.message = fmt::format("job {}: {}", j + 1, d.message);
      set.diagnostics.push_back(std::move(d));
    }
    std::string files;
    for (std::size_t k = 0; k < job.ranks.size() && k < 3; ++k) files += (k ? ", " : "") + fs::path(job.ranks[k].file).filename().string();
    if (job.ranks.size() > 3) files += fmt::format(" and {} more", job.ranks.size() - 3);
    which += fmt::format("{}job {} (profiling began {}): {}", j ? "; " : "", j + 1,
                         job.start_ns ? unix_time_text(*job.start_ns) : std::string("at an unknown time"), files);
    set.jobs.push_back(std::move(job));
  }
  set.diagnostics.push_back({Severity::warning, "mixed-jobs",
                             fmt::format("traces of {} jobs, told apart by when profiling began ({}); each is analysed apart. "
                                         "If they are one job, its ranks' clocks disagree by minutes",
                                         jobs.size(), which),
                             inputs, 0, {}});
  // Each file's figures stay; what compares ranks is said per job only.
  set.ranks.clear();
  for (const auto& job : set.jobs) set.ranks.insert(set.ranks.end(), job.ranks.begin(), job.ranks.end());
  set.collective_match.notes.push_back(fmt::format("the traces are of {} jobs: collectives are matched within each job", jobs.size()));
  return set;
}

void analyse_job(TraceSet& set, const TraceSetOptions& options, const std::string& inputs) {
  std::vector<TraceOfRank> of_rank;
  for (const auto& r : set.ranks)
    of_rank.push_back({fs::path(r.file).parent_path().string(), r.rank, r.steps_analysed, r.file, r.step_numbers,
                       r.total.busy_us + r.no_step.busy_us});
  const auto dropped = duplicate_traces(of_rank, set.diagnostics);
  for (auto i = dropped.rbegin(); i != dropped.rend(); ++i) set.ranks.erase(set.ranks.begin() + static_cast<std::ptrdiff_t>(*i));
  std::stable_sort(set.ranks.begin(), set.ranks.end(), [](auto& a, auto& b) { return a.rank < b.rank; });
  summarise_across(set);
  set.collective_match = match_collectives(set.ranks);
  if (!set.misaligned_steps.empty())
    set.diagnostics.push_back({Severity::warning, "misaligned-steps",
                               set.misaligned_steps + " (the straggler table, and collectives matched within a step)", inputs, 0, {}});
  if (!set.collective_match.clock_conflict.empty())
    set.diagnostics.push_back({Severity::warning, "clock-conflict", set.collective_match.clock_conflict, inputs, 0, {}});
  if (auto said = send_recv_by_order_note(set.collective_match); !said.empty())
    set.diagnostics.push_back({Severity::note, "send-recv-by-order", std::move(said), inputs, 0, {}});
  // The links: the first traced rank's GPU and the most GPUs any trace saw stand for the job's.
  std::string device;
  int visible = 0;
  for (const auto& r : set.ranks) {
    if (device.empty()) device = r.device;
    visible = std::max(visible, r.visible_gpus);
  }
  classify_links(set.collective_match, options.links, device, visible);
}

std::vector<std::size_t> duplicate_traces(const std::vector<TraceOfRank>& traces, std::vector<Diagnostic>& diagnostics) {
  auto mtime = [](const std::string& file) {
    std::error_code ec;
    auto t = fs::last_write_time(file, ec);
    return ec ? fs::file_time_type::min() : t;
  };
  // Better = more analysed steps, then more GPU work (an empty trace beside one without steps was
  // kept for being newer), then modified later, then the later path (a rerun's timestamped name).
  auto better = [&](const TraceOfRank& a, const TraceOfRank& b) {
    if (a.steps != b.steps) return a.steps > b.steps;
    if (a.gpu_busy_us != b.gpu_busy_us) return a.gpu_busy_us > b.gpu_busy_us;
    auto ta = mtime(a.file), tb = mtime(b.file);
    if (ta != tb) return ta > tb;
    return a.file > b.file;
  };
  std::map<std::pair<std::string, int>, std::vector<std::size_t>> by_rank;
  for (std::size_t i = 0; i < traces.size(); ++i) by_rank[{traces[i].group, traces[i].rank}].push_back(i);
  auto overlap = [](const TraceOfRank& a, const TraceOfRank& b) {
    if (a.step_numbers.empty() || b.step_numbers.empty()) return true;
    auto i = a.step_numbers.begin(), j = b.step_numbers.begin();
    while (i != a.step_numbers.end() && j != b.step_numbers.end()) {
      if (*i == *j) return true;
      *i < *j ? ++i : ++j;
    }
    return false;
  };
  std::vector<std::size_t> dropped;
  for (auto& [key, list] : by_rank) {
    if (list.size() < 2) continue;
    std::stable_sort(list.begin(), list.end(), [&](std::size_t a, std::size_t b) { return better(traces[a], traces[b]); });
    std::vector<std::size_t> kept;
    for (std::size_t i : list) {
      auto covering = std::find_if(kept.begin(), kept.end(), [&](std::size_t k) { return overlap(traces[i], traces[k]); });
      if (covering == kept.end()) {
        kept.push_back(i);
        continue;
      }
      const auto& keep = traces[*covering];
      dropped.push_back(i);
      diagnostics.push_back({Severity::warning, "duplicate-trace",
                             fmt::format("a second trace of rank {} in {} over the same steps; {} ({} steps) is kept, "
                                         "this one ({} steps) is left out so that the rank is counted once",
                                         key.second, key.first, keep.file, keep.steps, traces[i].steps),
                             traces[i].file, 0, {}});
    }
  }
  std::sort(dropped.begin(), dropped.end());
  return dropped;
}

namespace {

// Two sorted, distinct step lists share a step; a trace without step numbers shares every step.
bool share_a_step(const std::vector<std::int64_t>& a, const std::vector<std::int64_t>& b) {
  if (a.empty() || b.empty()) return true;
  auto i = a.begin(), j = b.begin();
  while (i != a.end() && j != b.end()) {
    if (*i == *j) return true;
    *i < *j ? ++i : ++j;
  }
  return false;
}

// Ranks of one job that began profiling in groups minutes apart (a slow node, late ranks), each a job
// of its own so far (`jobs`, in start order). A job that is not ranks 0..W-1 takes the later jobs
// that share no rank with it, up to the first that does (its next run began), where together they
// are ranks 0..W-1 each once, each of their traces profiled a step it profiled, and all began within
// kRanksOfOneJobNs of its first start. Where a missing rank began in two such groups, which of them
// is the job's cannot be told: all stay apart, said in `unsure`. `place`: each trace's place in
// start order, which a joined job's traces keep.
void join_late_ranks(std::vector<std::vector<std::size_t>>& jobs, const std::vector<TraceStart>& traces, int world_size,
                     const std::vector<std::size_t>& place, std::vector<std::string>* unsure) {
  if (world_size < 1) return;
  auto ranks_of = [&](const std::vector<std::size_t>& job) {
    std::set<int> ranks;
    for (std::size_t u : job) ranks.insert(traces[u].rank);
    return ranks;
  };
  auto whole = [&](const std::set<int>& ranks) {
    return static_cast<int>(ranks.size()) == world_size && *ranks.begin() == 0 && *ranks.rbegin() == world_size - 1;
  };
  auto first_start = [&](const std::vector<std::size_t>& job) {
    std::optional<std::int64_t> first;
    for (std::size_t u : job) {
      if (!traces[u].start_ns) return std::optional<std::int64_t>();
      first = first ? std::min(*first, *traces[u].start_ns) : *traces[u].start_ns;
    }
    return first;
  };
  std::vector<bool> taken(jobs.size(), false);
  for (std::size_t h = 0; h < jobs.size(); ++h) {
    const auto head_ranks = ranks_of(jobs[h]);
    const auto head_start = first_start(jobs[h]);
    if (taken[h] || !head_start || whole(head_ranks)) continue;
    std::vector<std::int64_t> steps;
    for (std::size_t u : jobs[h]) steps.insert(steps.end(), traces[u].step_numbers->begin(), traces[u].step_numbers->end());
    if (steps.empty()) continue;
    std::sort(steps.begin(), steps.end());
    std::vector<std::size_t> candidates;
    for (std::size_t k = h + 1; k < jobs.size(); ++k) {
      if (taken[k]) continue;
      const auto start = first_start(jobs[k]);
      if (!start || *start - *head_start > kRanksOfOneJobNs) break;
      const auto ranks = ranks_of(jobs[k]);
      if (std::any_of(ranks.begin(), ranks.end(), [&](int r) { return head_ranks.count(r) > 0; })) break;
      const bool fits = std::all_of(jobs[k].begin(), jobs[k].end(), [&](std::size_t u) {
        return !traces[u].step_numbers->empty() && share_a_step(*traces[u].step_numbers, steps) &&
               *traces[u].start_ns - *head_start <= kRanksOfOneJobNs;
      });
      if (fits) candidates.push_back(k);
    }
    std::map<int, std::vector<std::size_t>> groups_of;  // each rank the job lacks → the candidates that have it
    for (std::size_t k : candidates)
      for (int r : ranks_of(jobs[k])) groups_of[r].push_back(k);
    std::set<int> together = head_ranks;
    for (const auto& entry : groups_of) together.insert(entry.first);
    if (!whole(together)) continue;
    std::vector<int> twice;
    for (const auto& [rank, groups] : groups_of)
      if (groups.size() > 1) twice.push_back(rank);
    if (!twice.empty()) {
      if (unsure) {
        std::vector<std::string> groups;
        for (std::size_t k : candidates)
          groups.push_back(fmt::format("{} ({})", unix_time_text(*first_start(jobs[k])),
                                       fs::path(traces[jobs[k].front()].file).filename().string()));
        unsure->push_back(fmt::format(
            "{} {} began profiling in more than one of the groups that could be the late ranks of the job whose {} {} "
            "began at {} (groups beginning {}): which are that job's cannot be told, so each group is kept apart as a job",
            twice.size() == 1 ? "rank" : "ranks", list_ranks(twice, twice.size()), head_ranks.size() == 1 ? "rank" : "ranks",
            list_ranks({head_ranks.begin(), head_ranks.end()}, head_ranks.size()),
            unix_time_text(*head_start), list_first(groups, groups.size())));
      }
      continue;
    }
    for (std::size_t k : candidates) {
      jobs[h].insert(jobs[h].end(), jobs[k].begin(), jobs[k].end());
      taken[k] = true;
    }
    std::sort(jobs[h].begin(), jobs[h].end(), [&](std::size_t a, std::size_t b) { return place[a] < place[b]; });
  }
  std::size_t kept = 0;
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    if (taken[j]) continue;
    if (j != kept) jobs[kept] = std::move(jobs[j]);
    ++kept;
  }
  jobs.resize(kept);
}

}  // namespace

std::vector<std::vector<std::size_t>> split_into_jobs(const std::vector<TraceStart>& traces, int world_size,
                                                     std::vector<std::string>* unsure) {
  std::vector<std::size_t> order(traces.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  // Known starts in time order, then traces whose clock gives no start, by path.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const auto& sa = traces[a].start_ns;
    const auto& sb = traces[b].start_ns;
    if (sa.has_value() != sb.has_value()) return sa.has_value();
    if (sa && *sa != *sb) return *sa < *sb;
    return traces[a].file < traces[b].file;
  });
  // Sessions: traces whose starts lie within kSameJobGapNs of the previous one.
  std::vector<std::vector<std::size_t>> sessions;
  std::optional<std::int64_t> previous;
  for (std::size_t i : order) {
    const auto& start = traces[i].start_ns;
    const bool fresh = sessions.empty() || (start.has_value() != previous.has_value()) ||
                       (start && *start - *previous > kSameJobGapNs);
    if (fresh) sessions.emplace_back();
    sessions.back().push_back(i);
    previous = start;
  }
  // A later session of the same processes (schedule(repeat=N)): it shares a rank with `job`, and
  // each shared rank profiled other, later steps, from the same process where both traces say which.
  auto continues = [&](const std::vector<std::size_t>& job, const std::vector<std::size_t>& session) {
    bool shares_a_rank = false;
    for (std::size_t t : session) {
      const auto& b = *traces[t].step_numbers;
      const auto& process = traces[t].base_time_ns;
      for (std::size_t u : job) {
        if (traces[u].rank != traces[t].rank) continue;
        shares_a_rank = true;
        const auto& c = *traces[u].step_numbers;
        const bool other_process = process && traces[u].base_time_ns && *process != *traces[u].base_time_ns;
        if (other_process || share_a_step(b, c) || b.front() < c.back()) return false;
      }
    }
    return shares_a_rank;
  };
  std::vector<std::vector<std::size_t>> jobs;
  for (auto& session : sessions) {
    if (!jobs.empty() && continues(jobs.back(), session)) jobs.back().insert(jobs.back().end(), session.begin(), session.end());
    else jobs.push_back(std::move(session));
  }
  std::vector<std::size_t> place(traces.size());
  for (std::size_t p = 0; p < order.size(); ++p) place[order[p]] = p;
  join_late_ranks(jobs, traces, world_size, place, unsure);
  // Joined, late ranks' windows may continue one another as repeat windows do.
  std::vector<std::vector<std::size_t>> joined;
  for (auto& job : jobs) {
    if (!joined.empty() && continues(joined.back(), job)) joined.back().insert(joined.back().end(), job.begin(), job.end());
    else joined.push_back(std::move(job));
  }
  return joined;
}

std::string unix_time_text(std::int64_t ns) {
  const std::time_t secs = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                     tm.tm_min, tm.tm_sec);
}

void summarise_across(TraceSet& set) {
  std::vector<std::int64_t> names;
  for (const auto& r : set.ranks) names.insert(names.end(), r.step_numbers.begin(), r.step_numbers.end());
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  set.hta_step_filter = names.size() >= 2;

  set.step_time_us = across(set.ranks, [](const RankSummary& r) {
    return r.steps_analysed ? r.total.step_time_us / r.steps_analysed : std::nan("");
  });
  set.computation_score = across(set.ranks, [](const RankSummary& r) { return r.computation_score(); });
  set.exposed_comm_us = across(set.ranks, [](const RankSummary& r) {
    return r.steps_analysed ? r.total.exposed_comm_us / r.steps_analysed : std::nan("");
  });
  set.idle_us = across(set.ranks, [](const RankSummary& r) {
    return r.steps_analysed ? r.total.idle_us / r.steps_analysed : std::nan("");
  });

  // Per step number that every rank profiled (a step some ranks did not profile has no slowest
  // rank to tell): which rank took longest.
  std::vector<std::pair<int, const std::vector<std::int64_t>*>> steps_of;
  for (const auto& r : set.ranks) steps_of.emplace_back(r.rank, &r.step_numbers);
  const auto alignment = align_steps(steps_of);
  set.misaligned_steps = alignment.misaligned;
  std::map<std::int64_t, std::vector<std::pair<int, const StepFigures*>>> by_step;
  for (const auto& r : set.ranks)
    for (const auto& s : r.steps)
      if (!s.cut_off && alignment.common.count(s.step)) by_step[s.step].emplace_back(r.rank, &s);
  std::map<int, int> slowest_count;
  set.stragglers.clear();
  for (const auto& [step, entries] : by_step) {
    if (entries.size() < 2) continue;
    StepStraggler st;
    st.step = step;
    st.ranks = static_cast<int>(entries.size());
    st.slowest_us = -1;
    st.fastest_us = std::numeric_limits<double>::max();
    st.exposed_comm_min_us = std::numeric_limits<double>::max();
    for (auto [rank, f] : entries) {
      if (f->step_time_us > st.slowest_us) {
        st.slowest_us = f->step_time_us;
        st.slowest_rank = rank;
      }
      st.fastest_us = std::min(st.fastest_us, f->step_time_us);
      st.mean_us += f->step_time_us;
      st.exposed_comm_min_us = std::min(st.exposed_comm_min_us, f->exposed_comm_us);
      st.exposed_comm_max_us = std::max(st.exposed_comm_max_us, f->exposed_comm_us);
    }
    st.mean_us /= static_cast<double>(entries.size());
    ++slowest_count[st.slowest_rank];
    set.stragglers.push_back(st);
  }
  set.straggler_rank.reset();
  set.straggler_steps = 0;
  for (auto [rank, count] : slowest_count)
    if (count > set.straggler_steps) {
      set.straggler_rank = rank;
      set.straggler_steps = count;
    }
  // "Consistently": slowest in at least half of the steps seen on several ranks.
  if (set.straggler_rank && set.straggler_steps * 2 < static_cast<int>(set.stragglers.size())) set.straggler_rank.reset();
}

Mfu mfu_of(const RankSummary& r, std::optional<double> peak_override) {
  Mfu m;
  m.achieved_tflops = r.achieved_flops_per_s() / 1e12;
  std::optional<double> peak = peak_override;
  if (!peak && !r.flops_precision.empty()) peak = peak_tflops(r.device, r.flops_precision);
  m.peak_tflops = peak && *peak > 0 ? *peak : std::nan("");
  m.mfu = m.achieved_tflops / m.peak_tflops;
  return m;
}

RankBreakdown to_rank_breakdown(const RankSummary& r, std::optional<double> peak_tflops_override) {
  RankBreakdown b;
  b.rank = r.rank;
  b.source = r.file;
  b.steps = r.steps_analysed;
  b.step_time_us = r.total.step_time_us;
  b.comp_us = r.total.comp_us;
  b.comm_us = r.total.comm_us;
  b.overlap_us = r.total.overlap_us;
  b.exposed_comm_us = r.total.exposed_comm_us;
  b.mem_us = r.total.mem_us;
  b.busy_us = r.total.busy_us;
  b.idle_us = r.total.idle_us;
  b.span_us = r.total.span_us;
  b.dataloader_gpu_idle_us = r.total.dataloader_gpu_idle_us;
  b.step_numbers = r.step_numbers;
  for (const auto& s : r.steps)
    if (!s.cut_off) {
      b.step_times_us.push_back(s.step_time_us);
      b.step_ids.push_back(s.step);
      b.step_parts.push_back({s.comp_us, s.exposed_comm_us, s.idle_us, s.dataloader_gpu_idle_us, s.span_us});
    }
  b.world_size = r.world_size;
  b.backend = r.backend;
  b.start_ns = r.start_ns;
  b.base_time_ns = r.base_time_ns;
  b.calls = r.calls;
  if (r.flops_ops > 0) {
    b.flops = r.flops;
    auto m = mfu_of(r, peak_tflops_override);
    if (std::isfinite(m.peak_tflops)) b.peak_flops = m.peak_tflops * 1e12;
  }
  // The ops with most GPU time (at most 30) and what they lose against the roofline of this rank's
  // GPU (the table's peaks; NaN where the cost or a peak is unknown).
  for (const auto& op : r.ops) {
    if (b.op_losses.size() == 30) break;
    const auto p = roofline_of(op, r.device, {peak_tflops_override, std::nullopt});
    const bool known = std::isfinite(p.lost_us) && !p.bound.empty();
    b.op_losses.push_back({op.name, op.shapes, known ? p.bound : "", op.gpu_time_us, known ? p.lost_us : std::nan("")});
  }
  return b;
}

}  // namespace scalelens::trace
