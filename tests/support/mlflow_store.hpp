#pragma once
// An MLflow file store written the way MLflow's FileStore (mlflow/store/tracking/file_store.py)
// lays it out: mllogs/mlflow/<experiment id>/meta.yaml, a folder per run with its meta.yaml,
// params/, metrics/ and tags/; a deleted experiment in .trash/<experiment id>/, where
// delete_experiment moves it after marking it and its runs deleted.
#include <cstdint>
#include <filesystem>
#include <string>

#include "support/test_support.hpp"

namespace scalelens::testing {

class MlflowStore {
 public:
  MlflowStore(const ScratchDir& dir, std::string exp_id, std::string lifecycle = "active",
              const std::string& name = "scaling-test")
      : dir_(dir),
        exp_id_(exp_id),
        lifecycle_(lifecycle),
        exp_(lifecycle == "deleted" ? "mllogs/mlflow/.trash/" + exp_id : "mllogs/mlflow/" + exp_id) {
    dir_.write(exp_ + "/meta.yaml", "artifact_location: file:///scratch/mllogs/mlflow/" + exp_id +
                                        "\ncreation_time: 1700000000000\nexperiment_id: '" + exp_id +
                                        "'\nlast_update_time: 1700000000000\nlifecycle_stage: " + lifecycle +
                                        "\nname: " + name + "\n");
  }
  // `lifecycle` empty: the experiment's.
  void run(const std::string& id, const std::string& name, std::int64_t start_ms, std::int64_t end_ms, int status,
           const std::string& parent = "", const std::string& lifecycle = "") const {
    auto base = exp_ + "/" + id;
    dir_.write(base + "/meta.yaml", "artifact_uri: file:///scratch/mllogs/mlflow/" + exp_id_ + "/" + id +
                                        "/artifacts\nend_time: " + std::to_string(end_ms) +
                                        "\nentry_point_name: ''\nexperiment_id: '" + exp_id_ + "'\nlifecycle_stage: " +
                                        (lifecycle.empty() ? lifecycle_ : lifecycle) + "\nrun_id: " + id +
                                        "\nrun_name: " + name + "\nrun_uuid: " + id +
                                        "\nsource_name: ''\nsource_type: 4\nsource_version: ''\nstart_time: " +
                                        std::to_string(start_ms) + "\nstatus: " + std::to_string(status) +
                                        "\ntags: []\nuser_id: someone\n");
    dir_.write(base + "/tags/mlflow.runName", name);
    if (!parent.empty()) dir_.write(base + "/tags/mlflow.parentRunId", parent);
  }
  void param(const std::string& id, const std::string& key, const std::string& value) const {
    dir_.write(exp_ + "/" + id + "/params/" + key, value);
  }
  void metric(const std::string& id, const std::string& key, const std::string& lines) const {
    dir_.write(exp_ + "/" + id + "/metrics/" + key, lines);
  }
  // A worker run of itwinai's TorchTrainer: params of the rank, GPU samples 1 s apart unless its
  // rank is outside log_on_workers (`gpu_metrics` false).
  void worker(const std::string& id, const std::string& parent, int rank, int world, std::int64_t t0_ms,
              const std::string& strategy = "torch-ddp", bool gpu_metrics = true) const {
    run(id, rank == 0 ? "worker_0 (main)" : "worker_" + std::to_string(rank), t0_ms, t0_ms + 30'000, 3, parent);
    param(id, "strategy", strategy);
    param(id, "global_rank", std::to_string(rank));
    param(id, "global_world_size", std::to_string(world));
    param(id, "probing_interval", "1");
    if (!gpu_metrics) return;
    auto t = [&](int dt) { return std::to_string(t0_ms + dt); };
    metric(id, "gpu_power_W", t(5000) + " 300.5 5\n" + t(6001) + " 310.0 6\n");
    metric(id, "gpu_utilization_percent", t(5002) + " 90 5\n" + t(6003) + " 95 6\n");
  }
  void artifact(const std::string& id, const std::string& rel, const std::string& text) const {
    dir_.write(exp_ + "/" + id + "/artifacts/" + rel, text);
  }
  std::filesystem::path path(const std::string& rel) const { return dir_ / (exp_ + "/" + rel); }

 private:
  const ScratchDir& dir_;
  std::string exp_id_, lifecycle_, exp_;
};

}  // namespace scalelens::testing
