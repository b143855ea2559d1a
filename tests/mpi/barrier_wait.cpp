// A program whose communication time is known: in each of 3 steps (marked with MPI_Pcontrol),
// rank 1 computes (sleeps) 200 ms before a barrier, so rank 0 waits about 200 ms in MPI_Barrier
// per step while rank 1 waits almost nothing.
#include <mpi.h>
#include <unistd.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Barrier(MPI_COMM_WORLD);  // before the first step: not counted
  for (int step = 0; step < 3; ++step) {
    MPI_Pcontrol(1);
    if (rank == 1) usleep(200000);
    MPI_Barrier(MPI_COMM_WORLD);
    double x = rank, sum = 0;
    MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Pcontrol(0);
  MPI_Finalize();
  return 0;
}
