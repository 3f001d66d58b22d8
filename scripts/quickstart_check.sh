#!/usr/bin/env bash
# Runs the README's quick-start block verbatim in a fresh clone of this repository and checks the
# report it writes. The block is the first fenced block after the "<!-- quickstart" comment in
# README.md, so the README and this check cannot drift. The clone holds the committed tree (HEAD).
#
# Where Debian's own /usr/bin/python3 exists it is first on PATH, so "python3" in the block is the
# interpreter of a fresh Debian 12: PEP 668 in force, a pip install into it fails.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

block=$(awk '/^<!-- quickstart/ { f = 1; next } f && /^```/ { if (b) exit; b = 1; next } f && b { print }' README.md)
if [ -z "$block" ]; then
  echo "quickstart: no fenced block after <!-- quickstart --> in README.md" >&2
  exit 1
fi
report=$(grep -o -- '-o [^ &;|]*' <<<"$block" | tail -1 | cut -c4-)
if [ -z "$report" ]; then
  echo "quickstart: the block writes no report (-o PATH)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$repo" "$tmp/vakaudit"
cd "$tmp/vakaudit"
path=$PATH
if [ -x /usr/bin/python3 ]; then
  path="/usr/bin:/bin:$PATH"
fi
printf 'quickstart: running in %s:\n%s\n' "$PWD" "$block" >&2
env PATH="$path" bash -euo pipefail -c "$block"

# the report: there, one HTML document, and it names what the sample home holds (counted here from
# the files, not by vakaudit): its session ledgers
[ -s "$report" ] || { echo "quickstart: no report at $report" >&2; exit 1; }
head -c 200 "$report" | grep -qi '^<!doctype html' || { echo "quickstart: $report is not HTML" >&2; exit 1; }
tail -c 100 "$report" | grep -qi '</html>' || { echo "quickstart: $report is not a whole HTML document" >&2; exit 1; }
# its engine-drawn chart (drawn by the report's chart process here, as for any user)
grep -q '<figure class="chart"[^>]*><svg' "$report" || { echo "quickstart: $report has no chart" >&2; exit 1; }
sessions=$(find sample_homes/tiny -path '*/sessions/*/*.jsonl' -type f | wc -l)
text=$(sed -e 's/<[^>]*>/ /g' "$report" | tr -s ' \n' ' ')
if ! grep -q "this home, $sessions sessions" <<<"$text"; then
  echo "quickstart: $report does not say the home's $sessions sessions" >&2
  exit 1
fi
echo "quickstart: $report is an HTML report of the home's $sessions sessions" >&2
