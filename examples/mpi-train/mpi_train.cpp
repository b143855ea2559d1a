// A real data-parallel training on Open MPI: a one-hidden-layer MLP (tanh, logistic output) learns
// a teacher network's labels on a synthetic data set that every rank generates identically from a
// seed. Each step, every rank computes the gradient of its shard of the global batch and the
// gradients are summed with MPI_Allreduce, as DDP does. Strong scaling keeps the global batch and
// the epoch fixed; weak scaling keeps the per-rank batch and grows the epoch with the ranks.
// Epochs and steps are reported through the scalelens C++ API; loss per epoch goes to stdout.
//
//   mpirun -n 4 mpi_train [--mode strong|weak] [--epochs 4] [--batch 256] [--samples 8192]
//                         [--features 32] [--hidden 128] [--lr 0.5]
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <scalelens/scalelens.hpp>

namespace {

struct Options {
  bool weak = false;
  int epochs = 4;
  int batch = 256;      // strong: global batch; weak: per-rank batch
  int samples = 8192;   // strong: samples per epoch; weak: per rank and epoch
  int features = 32;
  int hidden = 128;
  double lr = 0.5;
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--mode") o.weak = v == "weak";
    else if (k == "--epochs") o.epochs = std::atoi(v.c_str());
    else if (k == "--batch") o.batch = std::atoi(v.c_str());
    else if (k == "--samples") o.samples = std::atoi(v.c_str());
    else if (k == "--features") o.features = std::atoi(v.c_str());
    else if (k == "--hidden") o.hidden = std::atoi(v.c_str());
    else if (k == "--lr") o.lr = std::atof(v.c_str());
    else {
      std::fprintf(stderr, "mpi_train: unknown option %s\n", k.c_str());
      std::exit(1);
    }
  }
  return o;
}

// Parameters of the MLP in one flat vector, so one Allreduce moves the whole gradient.
struct Mlp {
  int f, h;
  std::vector<double> p;  // W1 (h×f), b1 (h), w2 (h), b2 (1)
  Mlp(int features, int hidden) : f(features), h(hidden), p(static_cast<std::size_t>(hidden) * features + 2 * hidden + 1) {}
  double* W1() { return p.data(); }
  double* b1() { return p.data() + static_cast<std::size_t>(h) * f; }
  double* w2() { return b1() + h; }
  double* b2() { return w2() + h; }

  // Forward pass of one sample; returns the output probability and keeps the hidden layer.
  double forward(const double* x, std::vector<double>& a) {
    double z = *b2();
    for (int j = 0; j < h; ++j) {
      const double* w = W1() + static_cast<std::size_t>(j) * f;
      double s = b1()[j];
      for (int k = 0; k < f; ++k) s += w[k] * x[k];
      a[j] = std::tanh(s);
      z += w2()[j] * a[j];
    }
    return 1 / (1 + std::exp(-z));
  }

  // Adds the gradient of the log loss of (x, y) to g; returns the loss.
  double backward(const double* x, double y, std::vector<double>& a, std::vector<double>& g) {
    double prob = forward(x, a);
    double dz = prob - y;
    double* gW1 = g.data();
    double* gb1 = g.data() + static_cast<std::size_t>(h) * f;
    double* gw2 = gb1 + h;
    double* gb2 = gw2 + h;
    *gb2 += dz;
    for (int j = 0; j < h; ++j) {
      gw2[j] += dz * a[j];
      double da = dz * w2()[j] * (1 - a[j] * a[j]);
      gb1[j] += da;
      double* gw = gW1 + static_cast<std::size_t>(j) * f;
      for (int k = 0; k < f; ++k) gw[k] += da * x[k];
    }
    return -(y * std::log(prob + 1e-12) + (1 - y) * std::log(1 - prob + 1e-12));
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, world = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  Options o = parse(argc, argv);
  const int global_batch = o.weak ? o.batch * world : o.batch;
  const int epoch_samples = o.weak ? o.samples * world : o.samples;
  if (global_batch % world != 0 || epoch_samples % global_batch != 0) {
    if (rank == 0) std::fprintf(stderr, "mpi_train: batch must split evenly over %d ranks and divide the epoch\n", world);
    MPI_Finalize();
    return 1;
  }
  const int local_batch = global_batch / world;

  // Deterministic data: a random teacher MLP labels Gaussian inputs; identical on every rank.
  std::mt19937_64 rng(1234);
  std::normal_distribution<double> normal(0, 1);
  Mlp teacher(o.features, 16);
  for (auto& w : teacher.p) w = normal(rng);
  std::vector<double> xs(static_cast<std::size_t>(epoch_samples) * o.features), ys(epoch_samples);
  std::vector<double> a_teacher(16);
  for (int i = 0; i < epoch_samples; ++i) {
    for (int k = 0; k < o.features; ++k) xs[static_cast<std::size_t>(i) * o.features + k] = normal(rng);
    ys[i] = teacher.forward(&xs[static_cast<std::size_t>(i) * o.features], a_teacher) > 0.5 ? 1 : 0;
  }
  Mlp model(o.features, o.hidden);
  std::mt19937_64 init(99);
  std::normal_distribution<double> small(0, 1.0 / std::sqrt(o.features));
  for (auto& w : model.p) w = small(init);

  std::vector<double> grad(model.p.size()), sum(model.p.size()), act(o.hidden);
  const int steps_per_epoch = epoch_samples / global_batch;
  long long step = 0;
  for (int epoch = 0; epoch < o.epochs; ++epoch) {
    scalelens::EpochTimer epoch_timer(epoch, static_cast<double>(steps_per_epoch) * local_batch);
    double local_loss = 0;
    for (int s = 0; s < steps_per_epoch; ++s, ++step) {
      scalelens::StepTimer step_timer(step, local_batch);
      std::fill(grad.begin(), grad.end(), 0.0);
      const int first = s * global_batch + rank * local_batch;
      for (int i = first; i < first + local_batch; ++i)
        local_loss += model.backward(&xs[static_cast<std::size_t>(i) * o.features], ys[i], act, grad);
      MPI_Allreduce(grad.data(), sum.data(), static_cast<int>(grad.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      for (std::size_t k = 0; k < model.p.size(); ++k) model.p[k] -= o.lr * sum[k] / global_batch;
    }
    double loss = 0;
    MPI_Allreduce(&local_loss, &loss, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("epoch %d loss %.6f\n", epoch, loss / epoch_samples);
    std::fflush(stdout);
  }
  MPI_Finalize();
  return 0;
}
