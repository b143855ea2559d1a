#include "ingest/reader.hpp"

namespace scalelens {

std::vector<std::unique_ptr<Reader>> all_readers() {
  std::vector<std::unique_ptr<Reader>> readers;
  readers.push_back(make_run_manifest_reader());
  readers.push_back(make_rank_record_reader());
  readers.push_back(make_run_csv_reader());
  readers.push_back(make_mlperf_reader());
  readers.push_back(make_itwinai_mlflow_reader());
  readers.push_back(make_itwinai_csv_reader());
  readers.push_back(make_nvsmi_reader());
  readers.push_back(make_kineto_reader());
  return readers;
}

}  // namespace scalelens
