#!/usr/bin/env bash
# Every key the code accepts is documented in docs/CONFIG.md under its
# "## [section]" heading, and the documented default matches the code's.
set -u
rlvr=$1
doc=$2
fail=0
keys=$("$rlvr" config keys) || { echo "FAIL: rlvr config keys"; exit 1; }
while IFS= read -r line; do
  section=$(sed -E 's/^\[([^]]+)\].*/\1/' <<<"$line")
  key=$(sed -E 's/^\[[^]]+\] ([^ ]+) = .*/\1/' <<<"$line")
  default=$(sed -E 's/^\[[^]]+\] [^ ]+ = (.*)    ; .*/\1/' <<<"$line")
  # the section's block: from its heading to the next "## "
  block=$(awk -v h="## [$section]" '$0==h{on=1;next} /^## /{on=0} on' "$doc")
  row=$(grep -F "| \`$key\` |" <<<"$block" | head -n1)
  if [ -z "$row" ]; then
    echo "FAIL: [$section] $key is not documented in $doc"; fail=1; continue
  fi
  if ! grep -qF "\`$default\`" <<<"$row"; then
    echo "FAIL: [$section] $key: documented default differs from the code's \`$default\`: $row"; fail=1
  fi
done <<<"$keys"
n=$(wc -l <<<"$keys")
[ $fail = 0 ] && echo "test_config_docs: $n keys documented"
exit $fail
