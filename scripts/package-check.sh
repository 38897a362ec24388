#!/usr/bin/env bash
# Packages every publishable crate (what `cargo publish` would upload) and proves the
# packages build together, as a user gets them from crates.io: only the files each package
# carries, dependencies between them by version. Run from anywhere; CI runs it.
#
# `cargo publish --dry-run --workspace` does the same, but it verifies each package in a
# separate build of all its dependencies (over an hour on two cores); here the packages are
# unpacked side by side and checked as one workspace that reuses target/'s dependencies.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
# Every crate of the workspace that is published on crates.io, in the order cargo would
# publish them (not the test harness, the examples or the Python extension, published on
# PyPI by maturin).
# (Packages of earlier runs, perhaps of crates since renamed, are not this run's.)
rm -f target/package/*.crate
cargo package --workspace --exclude aguikit-peers --exclude aguikit-examples --exclude aguikit-python --no-verify --allow-dirty --quiet
check=target/package-check
rm -rf "$check"
mkdir -p "$check"
members=()
for crate in target/package/*.crate; do
  # -m: the files get the time of extraction; a package keeps a fixed 2006 mtime, which
  # would make cargo take the last run's build of an unchanged version for this one.
  tar -xzmf "$crate" -C "$check"
  members+=("\"$(basename "$crate" .crate)\"")
done
# What a package must carry and must not.
for dir in "$check"/*/; do
  name=$(basename "$dir")
  for f in Cargo.toml README.md LICENSE-MIT LICENSE-APACHE; do
    [ -f "$dir/$f" ] || { echo "package $name carries no $f"; exit 1; }
  done
  if find "$dir" \( -path '*/tests/*' -o -path '*/benches/*' -o -name 'package-lock.json' -o -path '*/node_modules/*' \) | grep -q .; then
    echo "package $name carries test data or build leftovers:"
    find "$dir" \( -path '*/tests/*' -o -path '*/benches/*' -o -name 'package-lock.json' -o -path '*/node_modules/*' \)
    exit 1
  fi
done
{
  echo '[workspace]'
  echo 'resolver = "3"'
  echo "members = [$(IFS=,; echo "${members[*]}")]"
  echo
  echo '[patch.crates-io]'
  for m in "${members[@]}"; do
    dir=${m//\"/}
    echo "${dir%-*} = { path = \"$dir\" }"
  done
  # The workspace's own profile, so that target/'s dependencies are reused.
  sed -n '/^\[profile\./,$p' Cargo.toml
} >"$check/Cargo.toml"
cp Cargo.lock "$check/Cargo.lock"
CARGO_TARGET_DIR="$root/target" cargo check --manifest-path "$check/Cargo.toml" --workspace --all-features --quiet
echo "package-check: $(ls target/package/*.crate | wc -l) packages built together from their packaged sources"
