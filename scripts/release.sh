#!/usr/bin/env bash
# Builds the release archives of regress: one per platform, each holding the
# binary, README.md and CHANGELOG.md, plus SHA256SUMS and the release notes
# (NOTES.md, the version's section of CHANGELOG.md).
#
#   bash scripts/release.sh OUTDIR             # a release: HEAD must be a clean checkout of a v* tag
#   bash scripts/release.sh --dry-run OUTDIR   # the same archives from any commit (what .ci/run checks)
#
# .github/workflows/release.yml runs the first form on a tag push and uploads
# OUTDIR to the GitHub release. Binaries are built with -trimpath,
# CGO_ENABLED=0 and stripped (-s -w); the version is the one go stamps into
# the build info from the VCS (the tag on a tagged clean commit, a
# pseudo-version otherwise), checked with `go version -m` and written by the
# binary into its result files (regress-version). Archives are reproducible: fixed order, owner and
# mtime (the commit's time), gzip without a name or time stamp.
set -euo pipefail

platforms=(linux/amd64 linux/arm64)
module=github.com/kernelwatch/kernelwatch

usage() { echo "usage: scripts/release.sh [--dry-run] OUTDIR" >&2; exit 2; }
dry_run=false
case "${1:-}" in
  --dry-run) dry_run=true; shift ;;
  -*) usage ;;
esac
[ $# -eq 1 ] || usage
out=$1

cd "$(dirname "$0")/.."
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [ -n "$(ls -A "$out")" ]; then
  echo "release: $out is not empty" >&2
  exit 2
fi

dirty=$(git status --porcelain --untracked-files=no)
tag=$(git tag --points-at HEAD --list 'v*' | sort -V | tail -n 1)
if [ "$dry_run" = false ]; then
  if [ -z "$tag" ]; then
    echo "release: HEAD ($(git rev-parse --short HEAD)) has no v* tag; tag it, or use --dry-run" >&2
    exit 2
  fi
  if [ -n "$dirty" ]; then
    echo "release: the working tree has uncommitted changes:" >&2
    echo "$dirty" >&2
    exit 2
  fi
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Build every platform; the version is what go stamped into the binaries.
stamped() { go version -m "$1" | awk -v m="$module" '$1 == "mod" && $2 == m { print $3 }'; }
version=""
for platform in "${platforms[@]}"; do
  goos=${platform%/*} goarch=${platform#*/}
  mkdir -p "$tmp/bin/$goos-$goarch"
  GOFLAGS= CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go build -trimpath -buildvcs=true -ldflags="-s -w" -o "$tmp/bin/$goos-$goarch/regress" ./cmd/regress
  got=$(stamped "$tmp/bin/$goos-$goarch/regress")
  if [ -z "$version" ]; then version=$got; fi
  if [ -z "$got" ] || [ "$got" != "$version" ]; then
    echo "release: the $platform binary carries version '$got' (the first: '$version')" >&2
    exit 1
  fi
done
if [ "$dry_run" = false ] && [ "$version" != "$tag" ]; then
  echo "release: go stamped $version, not the tag $tag (Go >= 1.24 stamps the tag of a clean tagged commit)" >&2
  exit 1
fi
if [ "$version" = "(devel)" ]; then
  # No VCS information (a git worktree, whose .git is a file, gets none).
  version="v0.0.0-devel-$(git rev-parse --short=12 HEAD)"
fi

# Release notes: the version's section of CHANGELOG.md; the top section for
# a dry run of an untagged commit.
notes_for=${tag:-}
if [ -n "$notes_for" ]; then
  awk -v v="$notes_for" '/^## / { on = ($2 == v) } on' CHANGELOG.md > "$out/NOTES.md"
else
  awk '/^## / { n++ } n == 1' CHANGELOG.md > "$out/NOTES.md"
fi
if [ ! -s "$out/NOTES.md" ]; then
  echo "release: CHANGELOG.md has no section \"## ${notes_for:-<version>}\"" >&2
  exit 1
fi
if [ "$dry_run" = false ] && head -n 1 "$out/NOTES.md" | grep -qi unreleased; then
  echo "release: CHANGELOG.md still calls $tag unreleased: date its heading first" >&2
  exit 1
fi

mtime=$(git log -1 --format=%ct HEAD)
for platform in "${platforms[@]}"; do
  goos=${platform%/*} goarch=${platform#*/}
  name="regress-$version-$goos-$goarch"
  mkdir -p "$tmp/$name"
  cp "$tmp/bin/$goos-$goarch/regress" README.md CHANGELOG.md "$tmp/$name/"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$mtime" -C "$tmp" -cf - "$name" | gzip -n -9 > "$out/$name.tar.gz"
done

# The archive for this machine must hold a binary that runs.
host="regress-$version-$(go env GOOS)-$(go env GOARCH)"
if [ -f "$out/$host.tar.gz" ]; then
  tar -xzOf "$out/$host.tar.gz" "$host/regress" > "$tmp/host-regress"
  chmod +x "$tmp/host-regress"
  "$tmp/host-regress" help > /dev/null
fi

(cd "$out" && sha256sum -- *.tar.gz > SHA256SUMS)
echo "release: $version$([ "$dry_run" = true ] && echo ' (dry run)') in $out:"
(cd "$out" && ls -l -- *.tar.gz SHA256SUMS NOTES.md | awk '{ print "  " $5 "\t" $9 }')
