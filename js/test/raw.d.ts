// Text imports (`?raw`), as Vite and the browser bundle (test/browser/bundle.mjs) provide them.
declare module "*?raw" {
  const text: string;
  export default text;
}
