#!/usr/bin/env bash
# The AVX2 trace walk (src/trace/kineto_walk_avx2.cpp) is built under `#pragma GCC target`, and
# kineto.cpp calls it only on CPUs that have AVX2. That file also emits, as weak copies, inline
# functions it did not inline (a vector's move, a push_back's slow path), built for AVX2; the
# linker keeps one copy of each for the whole program. Where it keeps the AVX2 one and code
# outside the walk calls it, the program dies with SIGILL on a CPU without AVX2, far from the walk.
# This check: in the linked program, every function holding an AVX or BMI instruction is either
# part of the AVX2 walk (its entry points, simdjson's own x86 kernels, what is instantiated with
# it) or called only from such functions. Functions are told apart by address: local clones
# (".isra", ".part") of the two walks share their names.
# Usage: avx2_only_from_avx2.sh EXECUTABLE
set -euo pipefail
bin=$1
objdump -d --no-show-raw-insn -C "$bin" | awk '
  /^[0-9a-f]+ <.*>:$/ {
    at = $1; name = $0; sub(/^[0-9a-f]+ </, "", name); sub(/>:$/, "", name)
    name_of[at] = name; functions++
    walk[at] = name ~ /scalelens::trace::detail::parse_(events|slice)_avx2\(/ || name ~ /simdjson::(haswell|icelake|westmere)::/
    next
  }
  at == "" { next }
  /\t(v[a-z0-9]+|andn|bextr|blsi|blsmsk|blsr|bzhi|lzcnt|tzcnt|mulx|pdep|pext|rorx|sarx|shlx|shrx|pclmulqdq)[ \t]/ { special[at] = 1 }
  /\t(call|jmp)[ \t]+[0-9a-f]+ </ {
    target = $0; sub(/^.*\t(call|jmp)[ \t]+/, "", target); sub(/ .*$/, "", target); target = sprintf("%016s", target); gsub(/ /, "0", target)
    if (target != at) callers[target] = callers[target] " " at
  }
  END {
    if (functions == 0) { print "FAIL: no functions disassembled"; exit 1 }
    bad = 0; allowed = 0
    for (f in special) {
      if (walk[f]) { allowed++; continue }
      n = split(callers[f], from, " "); fine = 1
      for (i = 1; i <= n; i++)
        if (!walk[from[i]]) {
          printf "FAIL: %s\n  holds AVX/BMI instructions and is called from %s\n", name_of[f], name_of[from[i]]
          bad++; fine = 0
          break
        }
      allowed += fine
    }
    if (bad) exit 1
    printf "ok: %d functions holding AVX/BMI instructions, each the AVX2 walk'\''s or called only from it (%d functions in all)\n", allowed, functions
  }'
