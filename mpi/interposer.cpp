// PMPI interposer: each wrapped MPI call is timed and its time added to the current step; at
// each step's end one line goes to $SCALELENS_RUN_DIR/comm/<rank>.csv:
//   rank,step,start_ns,end_ns,comm_ns,calls,bytes
// Steps are marked by MPI_Pcontrol(1) (ends the current step, starts the next), MPI_Pcontrol(0)
// (ends it), or by scalelens_mpi_step_begin/end, which the scalelens C++ API calls when this
// library is loaded. Without marks, one line (step −1) covers MPI_Init to MPI_Finalize.
#include <mpi.h>
#include <sys/stat.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <scalelens/scalelens.hpp>

namespace {

// On the run's clock inside `scalelens run` (SCALELENS_CLOCK), as the C++ API stamps epochs and
// steps, so that an NTP step of the wall clock enters no line; else the wall clock, so that ranks
// on many nodes line up.
std::int64_t now_ns() { return scalelens::now_ns(); }

struct State {
  int rank = -1;
  FILE* out = nullptr;
  bool any_step = false;
  bool in_step = false;
  std::int64_t step = -1;
  std::int64_t step_start = 0;
  std::int64_t init_time = 0;
  std::int64_t last_flush = 0;
  std::atomic<std::int64_t> comm_ns{0}, calls{0}, bytes{0};
};
State g;
thread_local int depth = 0;  // MPI calls made from inside a timed call are not counted twice

// Times the enclosing MPI call (RAII), counting `bytes` payload.
struct Timed {
  std::int64_t t0 = 0;
  explicit Timed(std::int64_t payload = 0) {
    if (depth++ == 0) {
      t0 = now_ns();
      if (payload > 0) g.bytes.fetch_add(payload, std::memory_order_relaxed);
    }
  }
  ~Timed() {
    if (--depth == 0) {
      g.comm_ns.fetch_add(now_ns() - t0, std::memory_order_relaxed);
      g.calls.fetch_add(1, std::memory_order_relaxed);
    }
  }
};

std::int64_t payload(int count, MPI_Datatype type) {
  int size = 0;
  if (count <= 0 || type == MPI_DATATYPE_NULL || PMPI_Type_size(type, &size) != MPI_SUCCESS) return 0;
  return static_cast<std::int64_t>(count) * size;
}

void write_line(std::int64_t step, std::int64_t start, std::int64_t end) {
  if (!g.out) return;
  std::fprintf(g.out, "%d,%lld,%lld,%lld,%lld,%lld,%lld\n", g.rank, static_cast<long long>(step),
               static_cast<long long>(start), static_cast<long long>(end),
               static_cast<long long>(g.comm_ns.exchange(0)), static_cast<long long>(g.calls.exchange(0)),
               static_cast<long long>(g.bytes.exchange(0)));
  // Flushed at least every second, so a killed job leaves complete lines behind.
  if (end - g.last_flush > 1'000'000'000) {
    std::fflush(g.out);
    g.last_flush = end;
  }
}

void open_output() {
  const char* dir = std::getenv("SCALELENS_RUN_DIR");
  if (!dir || !*dir) dir = std::getenv("SCALELENS_COMM_DIR");
  if (!dir || !*dir) return;  // not under scalelens run: pass calls through, record nothing
  PMPI_Comm_rank(MPI_COMM_WORLD, &g.rank);
  if (const char* r = std::getenv("SCALELENS_RANK"); r && *r) g.rank = std::atoi(r);
  std::string folder = std::string(dir) + "/comm";
  ::mkdir(dir, 0755);
  if (::mkdir(folder.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "scalelens-mpi: cannot create %s: %s\n", folder.c_str(), std::strerror(errno));
    return;
  }
  std::string path = folder + "/" + std::to_string(g.rank) + ".csv";
  g.out = std::fopen(path.c_str(), "w");
  if (!g.out) {
    std::fprintf(stderr, "scalelens-mpi: cannot write %s: %s\n", path.c_str(), std::strerror(errno));
    return;
  }
  std::fputs("rank,step,start_ns,end_ns,comm_ns,calls,bytes\n", g.out);
  std::fflush(g.out);
}

void end_step(std::int64_t t) {
  if (!g.in_step) return;
  write_line(g.step, g.step_start, t);
  g.in_step = false;
}

void begin_step(std::int64_t step, std::int64_t t) {
  end_step(t);
  if (!g.any_step) {
    // Communication before the first mark (set-up) belongs to no step.
    g.comm_ns = 0;
    g.calls = 0;
    g.bytes = 0;
  }
  g.any_step = g.in_step = true;
  g.step = step;
  g.step_start = t;
}

void after_init() {
  g.init_time = now_ns();
  g.last_flush = g.init_time;
  open_output();
}

}  // namespace

extern "C" {

// Called by the scalelens C++ API (found with dlsym) at step boundaries.
void scalelens_mpi_step_begin(long long step) { begin_step(step, now_ns()); }
void scalelens_mpi_step_end(long long) { end_step(now_ns()); }

int MPI_Init(int* argc, char*** argv) {
  int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) after_init();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) after_init();
  return rc;
}

int MPI_Finalize() {
  std::int64_t t = now_ns();
  if (g.in_step) end_step(t);
  else if (!g.any_step) write_line(-1, g.init_time, t);
  if (g.out) {
    std::fclose(g.out);
    g.out = nullptr;
  }
  return PMPI_Finalize();
}

int MPI_Pcontrol(const int level, ...) {
  std::int64_t t = now_ns();
  if (level == 0) end_step(t);
  else begin_step(g.any_step ? g.step + 1 : 0, t);
  return MPI_SUCCESS;
}

// Point to point.
int MPI_Send(const void* b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Send(b, c, t, d, tag, comm);
}
int MPI_Ssend(const void* b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Ssend(b, c, t, d, tag, comm);
}
int MPI_Bsend(const void* b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Bsend(b, c, t, d, tag, comm);
}
int MPI_Rsend(const void* b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Rsend(b, c, t, d, tag, comm);
}
int MPI_Recv(void* b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Status* st) {
  Timed _(payload(c, t));
  return PMPI_Recv(b, c, t, s, tag, comm, st);
}
int MPI_Sendrecv(const void* sb, int sc, MPI_Datatype st, int d, int stag, void* rb, int rc, MPI_Datatype rt, int s,
                 int rtag, MPI_Comm comm, MPI_Status* status) {
  Timed _(payload(sc, st));
  return PMPI_Sendrecv(sb, sc, st, d, stag, rb, rc, rt, s, rtag, comm, status);
}
int MPI_Sendrecv_replace(void* b, int c, MPI_Datatype t, int d, int stag, int s, int rtag, MPI_Comm comm,
                         MPI_Status* status) {
  Timed _(payload(c, t));
  return PMPI_Sendrecv_replace(b, c, t, d, stag, s, rtag, comm, status);
}
int MPI_Isend(const void* b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request* r) {
  Timed _(payload(c, t));
  return PMPI_Isend(b, c, t, d, tag, comm, r);
}
int MPI_Issend(const void* b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request* r) {
  Timed _(payload(c, t));
  return PMPI_Issend(b, c, t, d, tag, comm, r);
}
int MPI_Irecv(void* b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Request* r) {
  Timed _;
  return PMPI_Irecv(b, c, t, s, tag, comm, r);
}
int MPI_Probe(int s, int tag, MPI_Comm comm, MPI_Status* st) {
  Timed _;
  return PMPI_Probe(s, tag, comm, st);
}

// Completion: where non-blocking communication shows up as waiting.
int MPI_Wait(MPI_Request* r, MPI_Status* st) {
  Timed _;
  return PMPI_Wait(r, st);
}
int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[]) {
  Timed _;
  return PMPI_Waitall(n, r, st);
}
int MPI_Waitany(int n, MPI_Request r[], int* i, MPI_Status* st) {
  Timed _;
  return PMPI_Waitany(n, r, i, st);
}
int MPI_Waitsome(int n, MPI_Request r[], int* out, int idx[], MPI_Status st[]) {
  Timed _;
  return PMPI_Waitsome(n, r, out, idx, st);
}
int MPI_Test(MPI_Request* r, int* flag, MPI_Status* st) {
  Timed _;
  return PMPI_Test(r, flag, st);
}
int MPI_Testall(int n, MPI_Request r[], int* flag, MPI_Status st[]) {
  Timed _;
  return PMPI_Testall(n, r, flag, st);
}

// Collectives.
int MPI_Barrier(MPI_Comm comm) {
  Timed _;
  return PMPI_Barrier(comm);
}
int MPI_Bcast(void* b, int c, MPI_Datatype t, int root, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Bcast(b, c, t, root, comm);
}
int MPI_Reduce(const void* sb, void* rb, int c, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Reduce(sb, rb, c, t, op, root, comm);
}
int MPI_Allreduce(const void* sb, void* rb, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Allreduce(sb, rb, c, t, op, comm);
}
int MPI_Allgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  Timed _(payload(sc, st));
  return PMPI_Allgather(sb, sc, st, rb, rc, rt, comm);
}
int MPI_Allgatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rc[], const int displs[],
                   MPI_Datatype rt, MPI_Comm comm) {
  Timed _(payload(sc, st));
  return PMPI_Allgatherv(sb, sc, st, rb, rc, displs, rt, comm);
}
int MPI_Gather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  Timed _(payload(sc, st));
  return PMPI_Gather(sb, sc, st, rb, rc, rt, root, comm);
}
int MPI_Gatherv(const void* sb, int sc, MPI_Datatype st, void* rb, const int rc[], const int displs[], MPI_Datatype rt,
                int root, MPI_Comm comm) {
  Timed _(payload(sc, st));
  return PMPI_Gatherv(sb, sc, st, rb, rc, displs, rt, root, comm);
}
int MPI_Scatter(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, int root, MPI_Comm comm) {
  Timed _(payload(rc, rt));
  return PMPI_Scatter(sb, sc, st, rb, rc, rt, root, comm);
}
int MPI_Scatterv(const void* sb, const int sc[], const int displs[], MPI_Datatype st, void* rb, int rc, MPI_Datatype rt,
                 int root, MPI_Comm comm) {
  Timed _(payload(rc, rt));
  return PMPI_Scatterv(sb, sc, displs, st, rb, rc, rt, root, comm);
}
int MPI_Alltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm) {
  Timed _(payload(sc, st));
  return PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
}
int MPI_Alltoallv(const void* sb, const int sc[], const int sd[], MPI_Datatype st, void* rb, const int rc[],
                  const int rd[], MPI_Datatype rt, MPI_Comm comm) {
  Timed _;
  return PMPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm);
}
int MPI_Reduce_scatter(const void* sb, void* rb, const int rc[], MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  Timed _;
  return PMPI_Reduce_scatter(sb, rb, rc, t, op, comm);
}
int MPI_Reduce_scatter_block(const void* sb, void* rb, int rc, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  Timed _(payload(rc, t));
  return PMPI_Reduce_scatter_block(sb, rb, rc, t, op, comm);
}
int MPI_Scan(const void* sb, void* rb, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Scan(sb, rb, c, t, op, comm);
}
int MPI_Exscan(const void* sb, void* rb, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  Timed _(payload(c, t));
  return PMPI_Exscan(sb, rb, c, t, op, comm);
}
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* r) {
  Timed _;
  return PMPI_Ibarrier(comm, r);
}
int MPI_Ibcast(void* b, int c, MPI_Datatype t, int root, MPI_Comm comm, MPI_Request* r) {
  Timed _(payload(c, t));
  return PMPI_Ibcast(b, c, t, root, comm, r);
}
int MPI_Iallreduce(const void* sb, void* rb, int c, MPI_Datatype t, MPI_Op op, MPI_Comm comm, MPI_Request* r) {
  Timed _(payload(c, t));
  return PMPI_Iallreduce(sb, rb, c, t, op, comm, r);
}
int MPI_Ireduce(const void* sb, void* rb, int c, MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm, MPI_Request* r) {
  Timed _(payload(c, t));
  return PMPI_Ireduce(sb, rb, c, t, op, root, comm, r);
}
int MPI_Iallgather(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                   MPI_Request* r) {
  Timed _(payload(sc, st));
  return PMPI_Iallgather(sb, sc, st, rb, rc, rt, comm, r);
}
int MPI_Ialltoall(const void* sb, int sc, MPI_Datatype st, void* rb, int rc, MPI_Datatype rt, MPI_Comm comm,
                  MPI_Request* r) {
  Timed _(payload(sc, st));
  return PMPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, r);
}

}  // extern "C"
