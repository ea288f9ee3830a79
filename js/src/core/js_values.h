// Conversions between emscripten::val (what the TypeScript wrapper passes) and kiln values:
// Handles, trees (nested JS arrays of Handles, numbers, null), axes, shapes and dtypes.
#pragma once
#include <emscripten/val.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/kiln.h"

namespace kiln::js {

// The C++ object behind one JS kiln Array. JS owns each Handle it receives and deletes it
// when the Array's reference count reaches zero (js/src/array.ts).
struct Handle {
  Array a;
};

using emscripten::val;

bool is_set(const val& v);  // neither undefined nor null
Array to_array(const val& v);  // a Handle, a JS number (weak float32) or a boolean
std::vector<Array> to_arrays(const val& list);
Tree to_tree(const val& v);  // JS arrays become lists; Handles, numbers and booleans leaves
val from_tree(const Tree& t);
val from_array(const Array& a);
val from_arrays(const std::vector<Array>& v);

// The operation whose arguments are being read: conversion errors name it ("zeros: option
// 'shape' got ..."). call_op and the transformation entry points set it (OpName).
const std::string& current_op();
struct OpName {
  explicit OpName(std::string name);
  ~OpName();
  std::string saved;
};

// Checked conversions of one JS value (`what` names it in the error): embind's own as<T>()
// throws a JS TypeError (or wraps silently) that unwinds through C++ without running its
// destructors, so every value from JS goes through these instead.
double js_number(const val& v, const std::string& what);
int js_int(const val& v, const std::string& what);         // an integer in int32 range
int64_t js_int64(const val& v, const std::string& what);   // an integer of at most 2^53
bool js_bool(const val& v, const std::string& what);
std::string js_string(const val& v, const std::string& what);
int js_length(const val& v, const std::string& what);      // of a JS array
std::string js_describe(const val& v);                    // "a string 'abc'", "an object", ...

// JS classes the per-call paths test against or construct (instanceof, new), looked up once.
enum class JsClass { Uint8Array, Handle };
const val& js_class(JsClass c);
// Whether v is a JS array (Array.isArray, looked up once: embind's val::isArray() looks the
// global `Array` up by name on every use, and js_length runs for every argument list).
bool js_is_array(const val& v);
// The property key "length", made once (a C-string key is decoded into a JS string per use).
const val& js_key_length();

// Option fields of a params object; absent fields give the default. Wrong JS types are a
// kiln::Error naming the current operation and the option.
int get_int(const val& p, const char* key, int dflt);
double get_num(const val& p, const char* key, double dflt);
bool get_bool(const val& p, const char* key, bool dflt);
std::string get_str(const val& p, const char* key, const std::string& dflt);
std::optional<int> get_opt_int(const val& p, const char* key);
Axes get_axes(const val& p, const char* key);  // number, number[] or absent/null (all)
Shape get_shape(const val& p, const char* key);
std::vector<int> get_ints(const val& p, const char* key);
std::vector<int64_t> get_int64s(const val& p, const char* key);
std::optional<DType> get_dtype(const val& p, const char* key);
DType need_dtype(const val& p, const char* key);  // the option must be given

// A JS Error with kiln's message: entry points return it instead of throwing across the
// JS boundary, so that C++ destructors always run (the wrapper rethrows it).
val js_error(const std::string& message);
// The JS error for a caught exception: a kiln::Error's kind picks its class (TypeError,
// RangeError or Error), as jax-js throws them; anything else is an Error.
val js_error(const std::exception& e);

// Makes `device` the default device while it lives, so the arrays created meanwhile (a new
// array, a model's constants) are placed there; the previous default comes back after. An
// empty name keeps the default.
struct OnDevice {
  explicit OnDevice(const std::string& device);
  ~OnDevice();
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;
  std::string saved;
};

// The default device's name (what OnDevice sets).
std::string current_device();

// A JS string from bytes that may not be whole UTF-8 (a token's text can end inside a
// character): invalid or truncated sequences become U+FFFD, as TextDecoder does in browsers.
// (embind's val(std::string) decodes with UTF8ToString, which reads on past the end of a
// truncated sequence.)
val js_text(const std::string& utf8);

// A JS array of strings (method, input and operator names).
val strings_to_js(const std::vector<std::string>& strings);

// The bytes of a Uint8Array (a model file), copied into the core's memory; `what` names it.
std::vector<uint8_t> bytes_of_js(const val& bytes, const char* what);

}  // namespace kiln::js
