// kiln's `numpy.fft` namespace (jax-js's names and signatures): complex values are
// ComplexPair objects of two float Arrays; each function consumes its input Arrays and calls
// the core's transforms (src/library/fft.cpp), which grad, jvp, vmap and jit see through.
/**
 * Discrete Fourier transforms (jax.numpy.fft): complex values are {@link ComplexPair}s of two
 * float arrays. Every transform is differentiable and works under jit and vmap; inputs are
 * consumed.
 *
 * @example
 * ```ts
 * const { real, imag } = np.fft.rfft(np.array([1, 0, 0, 0])); // all ones, zero imaginary part
 * ```
 * @module
 */
import { Array, run } from "./array.js";

/**
 * A pair of arrays representing real and imaginary part `a + bj`. Both arrays
 * must have the same shape.
 */
export type ComplexPair = { real: Array; imag: Array };

const pair = ([real, imag]: [Array, Array]): ComplexPair => ({ real, imag });
const parts = (name: string, a: ComplexPair): Array[] => {
  if (a === null || typeof a !== "object" || !(a.real instanceof Array) || !(a.imag instanceof Array))
    throw new TypeError(`numpy.fft.${name}: expected a ComplexPair { real: Array, imag: Array }`);
  return [a.real, a.imag];
};
const real = (name: string, a: Array): Array[] => {
  if (!(a instanceof Array)) throw new TypeError(`numpy.fft.${name}: expected an Array`);
  return [a];
};

/** Compute a one-dimensional discrete Fourier transform. */
export const fft = (a: ComplexPair, axis = -1): ComplexPair => pair(run("fft.fft", parts("fft", a), { axis }));
/** Compute an N-dimensional discrete Fourier transform. */
export const fftn = (a: ComplexPair, axes: number[] | null = null): ComplexPair => pair(run("fft.fftn", parts("fftn", a), { axes }));
/** Compute a two-dimensional discrete Fourier transform. */
export const fft2 = (a: ComplexPair, axes: number[] = [-2, -1]): ComplexPair => pair(run("fft.fft2", parts("fft2", a), { axes }));
/** Compute a one-dimensional inverse discrete Fourier transform. */
export const ifft = (a: ComplexPair, axis = -1): ComplexPair => pair(run("fft.ifft", parts("ifft", a), { axis }));
/** Compute an N-dimensional inverse discrete Fourier transform. */
export const ifftn = (a: ComplexPair, axes: number[] | null = null): ComplexPair => pair(run("fft.ifftn", parts("ifftn", a), { axes }));
/** Compute a two-dimensional inverse discrete Fourier transform. */
export const ifft2 = (a: ComplexPair, axes: number[] = [-2, -1]): ComplexPair => pair(run("fft.ifft2", parts("ifft2", a), { axes }));
/** Compute a one-dimensional FFT of real input (the non-negative frequency terms). */
export const rfft = (a: Array, axis = -1): ComplexPair => pair(run("fft.rfft", real("rfft", a), { axis }));
/** Compute the inverse of `rfft`; the output length is `2 * (m - 1)` for `m` packed terms. */
export const irfft = (a: ComplexPair, axis = -1): Array => run("fft.irfft", parts("irfft", a), { axis });
/** Compute an N-dimensional FFT of real input (the last axis keeps non-negative terms). */
export const rfftn = (a: Array, axes: number[] | null = null): ComplexPair => pair(run("fft.rfftn", real("rfftn", a), { axes }));
/** Compute a two-dimensional FFT of real input. */
export const rfft2 = (a: Array, axes: number[] = [-2, -1]): ComplexPair => pair(run("fft.rfft2", real("rfft2", a), { axes }));
/** Compute the inverse of `rfftn`; the last axis has length `2 * (m - 1)`. */
export const irfftn = (a: ComplexPair, axes: number[] | null = null): Array => run("fft.irfftn", parts("irfftn", a), { axes });
/** Compute the inverse of `rfft2`. */
export const irfft2 = (a: ComplexPair, axes: number[] = [-2, -1]): Array => run("fft.irfft2", parts("irfft2", a), { axes });
/** Compute the FFT of a Hermitian-symmetric signal (output length `2 * (m - 1)`). */
export const hfft = (a: ComplexPair, axis = -1): Array => run("fft.hfft", parts("hfft", a), { axis });
/** Compute the inverse of `hfft`. */
export const ihfft = (a: Array, axis = -1): ComplexPair => pair(run("fft.ihfft", real("ihfft", a), { axis }));

function checkFreq(name: string, n: number, d: number) {
  if (!Number.isInteger(n) || n < 1) throw new Error(`numpy.fft.${name}: n must be a positive integer, got ${n}`);
  if (!Number.isFinite(d) || d === 0) throw new Error(`numpy.fft.${name}: d must be a finite non-zero number, got ${d}`);
}
/** Return sample frequencies for a discrete Fourier transform (float32). */
export function fftfreq(n: number, d = 1): Array {
  checkFreq("fftfreq", n, d);
  return run("fft.fftfreq", [], { n, d });
}
/** Return sample frequencies for a real-input discrete Fourier transform (float32). */
export function rfftfreq(n: number, d = 1): Array {
  checkFreq("rfftfreq", n, d);
  return run("fft.rfftfreq", [], { n, d });
}
/** Shift the zero-frequency component to the center of the spectrum. */
export const fftshift = (a: Array, axes: number | number[] | null = null): Array => run("fft.fftshift", real("fftshift", a), { axes });
/** Undo `fftshift`. */
export const ifftshift = (a: Array, axes: number | number[] | null = null): Array => run("fft.ifftshift", real("ifftshift", a), { axes });
