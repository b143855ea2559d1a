// Logs two epochs through the installed API; outside `scalelens run` it writes nothing and says so.
#include <scalelens/scalelens.hpp>

#include <cstdio>

int main() {
  for (int e = 0; e < 2; ++e) {
    scalelens::EpochTimer t(e);
    t.set_samples(100);
  }
  std::printf("scalelens api ok; run folder: '%s'\n", scalelens::run_dir().c_str());
  return 0;
}
