#pragma once
// How the scalelens process asks the C library and the kernel to manage its memory.
#include <cstddef>

namespace scalelens {

// Maps the whole pages inside [begin, begin + bytes) in one call, ahead of writing them: taking
// fresh pages one fault at a time was a third of a large ingest's time and a fifth of a large
// trace's (most of all in virtual machines, where a fault is dear). Best effort: where the kernel
// cannot (before Linux 5.14), the pages fault in as before.
void populate_for_writing(void* begin, std::size_t bytes);

// Keeps freed blocks (those under 32 MiB, up to 256 MiB of them) in the process for the next file
// instead of giving them back to the kernel at each free. Readers take and free megabytes per file (a node's GPU samples are
// reduced right after reading), and by default glibc returned those pages and faulted fresh zeroed
// ones in for the next file: 40 % of the time of reading a gpu.csv (bench/csv_bench.cpp). Peak
// memory is unchanged; memory no longer in use may stay resident until the process ends. For the
// command-line program only: a library loaded into someone else's process (Python) leaves the
// heap's policy to its host.
void keep_freed_memory_for_reuse();

// Gives the blocks kept above back to the kernel, when a phase that took and freed memory is over
// (the reading threads' heaps, which the later phases on the main thread do not reuse: 12 MB of
// a 10,000-run report's 140 MB peak), or a batch of reading (its freed buffers, holes between the
// data the study keeps, refill from fresh pages: 3 MiB of 41; bench/RESULTS.md).
void give_back_freed_memory();

// The most memory (resident set, KiB) this process has held: what `--timings` prints.
// /usr/bin/time's %M is the larger of it and its children's (the report's gnuplot, ~25 MiB), so a
// small study's figure there is gnuplot's. (The children's own peak is not told apart: a child
// started with vfork, as posix_spawn does, is charged this process's peak at its start.)
long peak_memory_kib();

}  // namespace scalelens
