#include "collect/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <simdjson.h>

#include "collect/run_folder.hpp"
#include "model/limits.hpp"
#include "common/file_io.hpp"
#include "common/fnv1a.hpp"
#include "common/json.hpp"
#include "common/subprocess.hpp"
#include "common/text.hpp"

namespace scalelens::sweep {

std::string_view state_name(State s) {
  switch (s) {
    case State::planned: return "planned";
    case State::submitted: return "submitted";
    case State::running: return "running";
    case State::done: return "done";
    case State::failed: return "failed";
    case State::cancelled: return "cancelled";
    case State::timeout: return "timeout";
  }
  return "planned";
}

std::optional<State> state_from_name(std::string_view s) {
  for (State st : {State::planned, State::submitted, State::running, State::done, State::failed, State::cancelled, State::timeout})
    if (state_name(st) == s) return st;
  return std::nullopt;
}

std::string substitute(std::string text, const Entry& e) {
  const std::pair<const char*, std::string> values[] = {
      {"{nodes}", std::to_string(e.nodes)}, {"{tasks}", std::to_string(e.tasks)},
      {"{tasks_per_node}", std::to_string(e.tasks_per_node)}, {"{gpus}", std::to_string(e.gpus)},
      {"{repeat}", std::to_string(e.repeat)}, {"{label}", e.label}, {"{run_id}", e.run_id}};
  for (const auto& [key, value] : values)
    for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, std::string_view(key).size(), value);
  return text;
}

int exit_status_of(std::int64_t code) { return limits::exit_status(code).value_or(1); }

std::int64_t largest_gpus(const Sizes& sizes) {
  std::int64_t most = 0;
  for (int n : sizes.nodes) most = std::max(most, std::int64_t{n} * sizes.tasks_per_node * sizes.gpus_per_task);
  for (int t : sizes.tasks) most = std::max(most, std::int64_t{t} * sizes.gpus_per_task);
  return most;
}

namespace {
// The label's part of a run id at most: the run id is a folder name, and the names made of it
// (".<run id>.claim-<pid>-<n>" as `scalelens run` claims the folder, "<run id>.<job>.out",
// "<run id>.<k>" of an earlier attempt) must stay within a file system's 255 bytes a name.
constexpr std::size_t kMaxRunIdLabel = 160;

// The label as a file name, unique: where safe_component replaced characters, labels that differ
// only there ("d d,p", "d_d_p"; every non-ASCII byte) would share run ids, so a short hash of the
// exact label tells them apart (FNV-1a: the same on every machine and build). A label too long for
// a name is cut, and the hash tells it from the others that begin alike.
std::string run_id_label(const std::string& label) {
  std::string safe = collect::safe_component(label);
  if (safe == label && safe.size() <= kMaxRunIdLabel) return safe;
  if (safe.size() > kMaxRunIdLabel - 9) safe.resize(kMaxRunIdLabel - 9);  // room for ".<8 hex digits>"
  return fmt::format("{}.{:08x}", safe, fnv1a_32(label));
}
}  // namespace

bool same_entry(const Entry& a, const Entry& b) {
  return a.label == b.label && a.nodes == b.nodes && a.tasks == b.tasks && a.tasks_per_node == b.tasks_per_node && a.gpus == b.gpus &&
         a.repeat == b.repeat;
}

std::string describe(const Entry& e) {
  return fmt::format("label '{}', {} node{} x {} task{} per node, {} GPU{}, repeat {}", printable(e.label), e.nodes, e.nodes == 1 ? "" : "s",
                     e.tasks_per_node, e.tasks_per_node == 1 ? "" : "s", e.gpus, e.gpus == 1 ? "" : "s", e.repeat);
}

std::vector<Entry> plan_entries(const std::string& label, const Sizes& sizes, const std::vector<std::string>& command) {
  std::vector<std::pair<int, int>> shapes;  // (nodes, tasks per node)
  for (int n : sizes.nodes) shapes.emplace_back(n, sizes.tasks_per_node);
  for (int t : sizes.tasks) shapes.emplace_back(1, t);
  std::vector<Entry> out;
  for (const auto& [nodes, per_node] : shapes)
    for (int r = 1; r <= sizes.repeats; ++r) {
      Entry e;
      e.label = one_line(label);  // it goes into job scripts and the commands' placeholders
      e.nodes = nodes;
      e.tasks_per_node = per_node;
      e.tasks = nodes * per_node;
      e.gpus = e.tasks * sizes.gpus_per_task;
      e.repeat = r;
      e.run_id = fmt::format("{}-{}n{}t-r{}", run_id_label(e.label), nodes, e.tasks, r);
      for (const auto& word : command) e.command.push_back(substitute(word, e));
      out.push_back(std::move(e));
    }
  return out;
}

std::vector<std::string> run_argv(const Plan& plan, const Entry& e, const std::filesystem::path& study, const std::string& scalelens) {
  // The entry's world size, stated: `run` detects it only from a launcher it knows (mpirun,
  // torchrun, srun), and a command that starts its own workers would be recorded at 1 and pooled
  // with the other sizes.
  std::vector<std::string> argv = {scalelens, "run", "--study", study.string(), "--label", e.label, "--run-id", e.run_id,
                                   "--world-size", std::to_string(e.gpus), "-q"};
  for (const auto& a : plan.run_args) argv.push_back(substitute(a, e));
  argv.push_back("--");
  argv.insert(argv.end(), e.command.begin(), e.command.end());
  return argv;
}

std::vector<std::string> sbatch_argv(const Plan& plan, const Entry& e, const std::filesystem::path& script) {
  std::vector<std::string> argv = {"sbatch", "--parsable"};
  for (const auto& a : plan.sbatch_args) argv.push_back(substitute(a, e));
  argv.push_back(script.string());
  return argv;
}

std::string shell_line(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& a : argv) out += (out.empty() ? "" : " ") + shell_quote(a);
  return out;
}

Result<std::string> job_script(const Plan& plan, const Entry& e, const std::filesystem::path& study, const std::string& scalelens,
                               const std::string& template_text) {
  // The label is free text: on one line in a script (a line break would end the #SBATCH header
  // and start a command; plan_entries makes it so, a plan written before may not have).
  Entry one = e;
  one.label = one_line(e.label);
  const std::string run = shell_line(run_argv(plan, one, study, scalelens));
  if (!template_text.empty()) {
    if (template_text.find("{scalelens_run}") == std::string::npos && template_text.find("{command}") == std::string::npos)
      return Error{"the template has neither {scalelens_run} nor {command}: nothing would run the measured command", plan.template_file};
    Entry quoted = one;  // {label} may stand in a command
    quoted.label = shell_quote(one.label);
    std::string text = substitute(template_text, quoted);
    for (const char* key : {"{scalelens_run}", "{command}"})
      for (std::size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + run.size()))
        text.replace(at, std::string_view(key).size(), run);
    // Quoted as {label} is: the study path stands in #SBATCH lines and commands, where a space
    // would split it.
    const std::string study_text = shell_quote(study.string());
    for (std::size_t at = text.find("{study}"); at != std::string::npos; at = text.find("{study}", at + study_text.size()))
      text.replace(at, 7, study_text);
    return text;
  }
  std::string s = "#!/bin/bash\n";
  s += fmt::format("# scalelens sweep: {} of label {} on {} node(s) x {} task(s), repeat {}\n", one.run_id, one.label, e.nodes,
                   e.tasks_per_node, e.repeat);
  s += fmt::format("#SBATCH --job-name={}\n", shell_quote("sl-" + e.run_id));
  s += fmt::format("#SBATCH --nodes={}\n#SBATCH --ntasks-per-node={}\n", e.nodes, e.tasks_per_node);
  s += fmt::format("#SBATCH --output={}\n", shell_quote((study / ".sweep" / (e.run_id + ".%j.out")).string()));
  s += "set -euo pipefail\n";
  // One `scalelens run` per task: each wraps its rank, all write the one run folder.
  std::vector<std::string> srun_args;  // placeholders filled as in the command and --run-args
  for (const auto& a : plan.srun_args) srun_args.push_back(substitute(a, e));
  s += fmt::format("srun --nodes={} --ntasks-per-node={}{}{} {}\n", e.nodes, e.tasks_per_node, srun_args.empty() ? "" : " ",
                   shell_line(srun_args), run);
  return s;
}

namespace dom = simdjson::dom;

// A plan is about 500 bytes an entry, a manifest a few KiB: far more is not one scalelens wrote.
constexpr std::size_t kMaxPlanBytes = std::size_t{256} << 20;
constexpr std::size_t kMaxManifestBytes = std::size_t{64} << 20;

std::string plan_json(const Plan& plan) {
  JsonWriter w;
  w.begin_object().key("schema").value(kSweepSchema).key("launcher").value(plan.launcher);
  w.key("sbatch_args").begin_array();
  for (const auto& a : plan.sbatch_args) w.value(a);
  w.end_array().key("srun_args").begin_array();
  for (const auto& a : plan.srun_args) w.value(a);
  w.end_array().key("template").value(plan.template_file).key("workdir").value(plan.workdir).key("run_args").begin_array();
  for (const auto& a : plan.run_args) w.value(a);
  w.end_array().key("mpirun").value(plan.mpirun).key("entries").begin_array();
  for (const auto& e : plan.entries) {
    w.begin_object().key("run_id").value(e.run_id).key("label").value(e.label).key("nodes").value(e.nodes);
    w.key("tasks").value(e.tasks).key("tasks_per_node").value(e.tasks_per_node).key("gpus").value(e.gpus).key("repeat").value(e.repeat);
    w.key("command").begin_array();
    for (const auto& c : e.command) w.value(c);
    w.end_array().key("state").value(state_name(e.state)).key("job_id").value(e.job_id);
    w.key("exit_status").value(e.exit_status).key("note").value(e.note);
    if (e.pid) w.key("pid").value(*e.pid).key("pid_start").value(e.pid_start).key("host").value(e.host);
    w.end_object();
  }
  w.end_array();
  if (plan.owner)
    w.key("owner").begin_object().key("pid").value(plan.owner->pid).key("pid_start").value(plan.owner->pid_start).key("host").value(
        plan.owner->host).end_object();
  w.end_object();
  std::string text = w.take();
  text += '\n';
  return text;
}

Result<bool> write_plan(const std::filesystem::path& file, const Plan& plan) { return write_file_atomic(file, plan_json(plan)); }

Result<Plan> read_plan(const std::filesystem::path& file) {
  auto text = read_regular_file(file, kMaxPlanBytes);
  if (!text) return Error{text.error().message, file.string()};
  auto bad = [&](const std::string& why) { return Error{"not a sweep plan scalelens can use: " + why, file.string()}; };
  dom::parser parser;
  dom::element root;
  simdjson::padded_string padded(text.value());
  if (auto e = parser.parse(padded).get(root)) return bad(fmt::format("not JSON ({})", simdjson::error_message(e)));
  std::string_view schema;
  if (root["schema"].get(schema) || schema != kSweepSchema) return bad("no \"schema\": \"scalelens.sweep/1\"");
  Plan plan;
  // Missing lists are empty; a list of anything but strings is refused. (A simdjson_result, never
  // converted to an element: that conversion throws on a missing field.)
  auto strings = [&](simdjson::simdjson_result<dom::element> e, std::vector<std::string>& into) {
    if (e.error() == simdjson::NO_SUCH_FIELD) return true;
    dom::array a;
    if (e.get(a)) return false;
    for (auto x : a) {
      std::string_view s;
      if (x.get(s)) return false;
      into.emplace_back(s);
    }
    return true;
  };
  std::string_view sv;
  if (root["launcher"].get(sv)) return bad("no launcher");
  plan.launcher = std::string(sv);
  if (!root["template"].get(sv)) plan.template_file = std::string(sv);
  if (auto w = root["workdir"]; w.error() != simdjson::NO_SUCH_FIELD) {
    if (w.get(sv)) return bad("workdir is not a string");
    plan.workdir = std::string(sv);
  }
  bool b;
  if (!root["mpirun"].get(b)) plan.mpirun = b;
  if (!strings(root["sbatch_args"], plan.sbatch_args) || !strings(root["run_args"], plan.run_args) ||
      !strings(root["srun_args"], plan.srun_args))
    return bad("sbatch_args, srun_args, run_args");
  dom::array entries;
  if (root["entries"].get(entries)) return bad("no entries");
  std::size_t i = 0;
  for (auto x : entries) {
    const std::string where = fmt::format("entries[{}]", i++);
    Entry e;
    std::int64_t n;
    std::string_view s;
    if (x["run_id"].get(s) || s.empty() || collect::safe_component(s) != s) return bad(where + ".run_id");
    e.run_id = std::string(s);
    if (x["label"].get(s)) return bad(where + ".label");
    e.label = std::string(s);
    for (auto [key, into] : {std::pair{"nodes", &e.nodes}, std::pair{"tasks", &e.tasks}, std::pair{"tasks_per_node", &e.tasks_per_node},
                             std::pair{"gpus", &e.gpus}, std::pair{"repeat", &e.repeat}}) {
      if (x[key].get(n) || n < 1 || n > 10'000'000) return bad(fmt::format("{}.{}", where, key));
      *into = static_cast<int>(n);
    }
    if (!strings(x["command"], e.command)) return bad(where + ".command");
    if (x["state"].get(s) || !state_from_name(s)) return bad(where + ".state");
    e.state = *state_from_name(s);
    if (!x["job_id"].get(s)) e.job_id = std::string(s);
    if (!x["exit_status"].get(n)) e.exit_status = exit_status_of(n);
    if (!x["note"].get(s)) e.note = std::string(s);
    if (!x["pid"].get(n) && n > 0 && n <= std::numeric_limits<int>::max()) e.pid = static_cast<int>(n);
    if (!x["pid_start"].get(s)) e.pid_start = std::string(s);
    if (!x["host"].get(s)) e.host = std::string(s);
    plan.entries.push_back(std::move(e));
  }
  // An owner without a pid names no sweep: as none.
  if (dom::object o; !root["owner"].get(o)) {
    std::int64_t n;
    std::string_view s;
    if (!o["pid"].get(n) && n > 0 && n <= std::numeric_limits<int>::max()) {
      Owner owner;
      owner.pid = static_cast<int>(n);
      if (!o["pid_start"].get(s)) owner.pid_start = std::string(s);
      if (!o["host"].get(s)) owner.host = std::string(s);
      plan.owner = std::move(owner);
    }
  }
  return plan;
}

std::optional<State> state_from_run_folder(const std::filesystem::path& study, const Entry& e, std::optional<int>& exit_status,
                                           std::string* why) {
  const auto manifest = study / e.run_id / "scalelens.json";
  auto text = read_regular_file(manifest, kMaxManifestBytes);
  if (!text) {
    std::error_code ec;
    if (!std::filesystem::exists(std::filesystem::symlink_status(manifest, ec))) return std::nullopt;  // not started yet
    if (why) *why = text.error().path + ": " + text.error().message;
    return State::failed;
  }
  dom::parser parser;
  dom::element root;
  simdjson::padded_string padded(text.value());
  if (parser.parse(padded).get(root)) return State::running;  // being written
  // A folder of this name may hold another run (a copied study, a plan deleted and made again):
  // it is this entry's only if its label and world size are the entry's.
  std::string_view label;
  std::int64_t world_size = 0;
  const bool has_size = !root["world_size"].get(world_size);
  const bool other_label = !root["label"].get(label) && label != e.label;
  if (other_label || (has_size && world_size != e.gpus)) {
    if (why)
      *why = fmt::format("{} holds a run of label '{}', world size {}, not this entry's ('{}', {} GPU{}): not taken as its run "
                         "(--resume moves it aside and runs the entry)",
                         manifest.string(), printable(label), has_size ? std::to_string(world_size) : "unknown", printable(e.label),
                         e.gpus, e.gpus == 1 ? "" : "s");
    return State::failed;
  }
  std::string_view status;
  if (root["status"].get(status) || status != "complete") return State::running;
  std::int64_t code = 0;
  if (!root["exit_status"].get(code)) exit_status = exit_status_of(code);
  return exit_status.value_or(0) == 0 ? State::done : State::failed;
}

State state_from_slurm(std::string_view word) {
  const std::string w = to_lower(trim(word));
  if (w == "pending" || w == "configuring" || w == "requeued" || w == "resizing" || w == "suspended") return State::submitted;
  if (w == "running" || w == "completing" || w == "stage_out" || w == "signaling") return State::running;
  if (w == "completed") return State::done;
  if (w.rfind("cancelled", 0) == 0) return State::cancelled;
  if (w == "timeout" || w == "deadline") return State::timeout;
  return State::failed;  // FAILED, NODE_FAIL, OUT_OF_MEMORY, BOOT_FAIL, PREEMPTED
}

std::vector<JobWord> parse_squeue(std::string_view out) {
  std::vector<JobWord> jobs;
  LineCursor lines(out);
  std::string_view line;
  while (lines.next(line)) {
    auto t = trim(line);
    const auto space = t.find(' ');
    if (t.empty() || space == std::string_view::npos) continue;
    auto rest = trim(t.substr(space + 1));
    const auto reason_at = rest.find(' ');
    jobs.push_back({std::string(t.substr(0, space)), std::string(rest.substr(0, reason_at)),
                    reason_at == std::string_view::npos ? "" : std::string(trim(rest.substr(reason_at + 1)))});
  }
  return jobs;
}

std::vector<JobWord> parse_scontrol(std::string_view out) {
  std::vector<JobWord> jobs;
  LineCursor lines(out);
  std::string_view line;
  while (lines.next(line)) {
    auto field = [&](std::string_view key) -> std::string {
      const auto at = line.find(key);
      if (at == std::string_view::npos || (at > 0 && line[at - 1] != ' ')) return "";
      const auto start = at + key.size();
      return std::string(line.substr(start, line.find(' ', start) - start));
    };
    const auto id = field("JobId="), state = field("JobState=");
    if (!id.empty() && !state.empty()) jobs.push_back({id, state, field("Reason=")});
  }
  return jobs;
}

std::vector<JobWord> parse_sacct(std::string_view out) {
  std::vector<JobWord> jobs;
  LineCursor lines(out);
  std::string_view line;
  while (lines.next(line)) {
    const auto bar = line.find('|');
    if (bar == std::string_view::npos) continue;
    const auto id = trim(line.substr(0, bar));
    auto state = trim(line.substr(bar + 1));
    state = state.substr(0, state.find_first_of(" |"));  // "CANCELLED by 0": who cancelled it is not its state
    if (!id.empty() && !state.empty()) jobs.push_back({std::string(id), std::string(state), ""});
  }
  return jobs;
}

bool never_starts(std::string_view reason) {
  static constexpr std::string_view kNever[] = {"PartitionNodeLimit", "PartitionTimeLimit", "BadConstraints",
                                                "DependencyNeverSatisfied", "InvalidAccount", "InvalidQOS",
                                                "AccountNotAllowed", "QOSNotAllowed"};
  // squeue may add detail after the code ("ReqNodeNotAvail, UnavailableNodes:..."): the code is the first word.
  const auto code = reason.substr(0, reason.find_first_of(", "));
  return std::find(std::begin(kNever), std::end(kNever), code) != std::end(kNever);
}

}  // namespace scalelens::sweep
