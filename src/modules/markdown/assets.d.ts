// The renderer's WebAssembly, imported `with { type: 'file' }`: the import is the file's path
// (inside the single binary, a path in its embedded file system).
declare module '*.wasm' {
  const path: string
  export default path
}
