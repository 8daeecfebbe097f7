#!/usr/bin/env bash
# tests/repo/check_config_once.sh SOURCE_DIR [--self-test] — every
# configuration key is read through its module's schema table: no source
# file calls rlvr_config_get_* or rlvr_config_is_set with a literal section
# name ("grpo") outside core/config.c. A module fills its struct with
# rlvr_config_fill (docs/CONFIG.md "Adding a key"); where it must ask about
# one key it takes the section from its table row (k->section).
# Fails naming file:line for each such call. Only core/config.c, which
# implements the getters, is allowed.
# --self-test copies a library file into a scratch tree with a forbidden call
# added and checks that the scan fails on it.
set -euo pipefail
root=${1:?usage: check_config_once.sh SOURCE_DIR [--self-test]}

folders=(core policy rl enclave envs mpi io eval slurm train jobs)
allow=(core/config.c)

allowed() {
  local f=$1 pattern
  for pattern in "${allow[@]}"; do
    # shellcheck disable=SC2053
    [[ $f == $pattern ]] && return 0
  done
  return 1
}

# file:line of each call whose section argument is a string literal; the
# call may span lines, so each file is read whole.
scan() {
  local dir=$1
  (cd "$dir" && for f in "${folders[@]}"; do if [ -d "$f" ]; then find "$f" -name '*.[ch]'; fi; done) | sort |
    while read -r f; do
      allowed "$f" && continue
      perl -0777 -ne '
        while (/rlvr_config_(?:get_\w+|is_set)\s*\(\s*(?:[^,()]|\([^()]*\))*,\s*"/g) {
          my $line = 1 + (substr($_, 0, $-[0]) =~ tr/\n//);
          print "$ARGV:$line\n";
        }' "$dir/$f" | sed "s|^$dir/||"
    done
}

if [ "${2:-}" = "--self-test" ]; then
  scratch=$(mktemp -d)
  trap 'rm -rf "$scratch"' EXIT
  mkdir -p "$scratch/rl" "$scratch/core"
  printf 'int f(const rlvr_config *cfg, double *v) {\n    return rlvr_config_get_double(cfg,\n        "grpo", "clip_low", v);\n}\n' > "$scratch/rl/bad.c"
  printf 'int g(const rlvr_config *cfg) { return rlvr_config_is_set(cfg, k->section, k->key); }\n' > "$scratch/rl/ok.c"
  printf 'int h(const rlvr_config *cfg) { return rlvr_config_is_set(cfg, "layout", "trainer"); }\n' > "$scratch/core/config.c"
  hits=$(scan "$scratch")
  if [ "$hits" != "rl/bad.c:2" ]; then
    echo "FAIL: the scan of a tree with one forbidden call (rl/bad.c:2) found: ${hits:-nothing}"
    exit 1
  fi
  echo "self-test: the scan finds rl/bad.c:2 and nothing else"
  exit 0
fi

echo "allowed to read keys by section name: ${allow[*]}"
hits=$(scan "$root")
if [ -n "$hits" ]; then
  printf '%s\n' "$hits"
  echo "FAIL: $(printf '%s\n' "$hits" | wc -l) call(s) read a key by a literal section name; declare the key"
  echo "      with a field in its module's table and read it with rlvr_config_fill (docs/CONFIG.md \"Adding a key\")"
  exit 1
fi
echo "config keys: every read goes through a schema table"
