/**
 * Which language a file is in, by its name, as Gitea's language statistics (go-enry, GitHub's
 * linguist) decide it for the common cases: by file name, then by extension, counting only
 * programming and markup languages (data such as JSON or YAML and prose such as Markdown are
 * not counted); vendored, generated and documentation paths and dot files are left out.
 */

const BY_EXTENSION: Record<string, string> = {}
const add = (language: string, extensions: string) => {
  for (const e of extensions.split(' ')) BY_EXTENSION[e] = language
}
add('TypeScript', 'ts cts mts')
add('TSX', 'tsx')
add('JavaScript', 'js cjs mjs jsx')
add('Go', 'go')
add('Rust', 'rs')
add('Python', 'py pyw pyi')
add('Ruby', 'rb rake gemspec')
add('Java', 'java')
add('Kotlin', 'kt kts')
add('Scala', 'scala sc')
add('Groovy', 'groovy gradle')
add('C', 'c h')
add('C++', 'cc cpp cxx c++ hh hpp hxx h++ inl ipp')
add('C#', 'cs csx')
add('F#', 'fs fsi fsx')
add('Visual Basic .NET', 'vb')
add('Objective-C', 'm')
add('Objective-C++', 'mm')
add('Swift', 'swift')
add('Dart', 'dart')
add('PHP', 'php phtml')
add('Perl', 'pl pm')
add('Raku', 'raku rakumod')
add('Lua', 'lua')
add('R', 'r')
add('Julia', 'jl')
add('Haskell', 'hs lhs')
add('Elixir', 'ex exs')
add('Erlang', 'erl hrl')
add('Clojure', 'clj cljs cljc edn')
add('OCaml', 'ml mli')
add('Elm', 'elm')
add('Nim', 'nim')
add('Zig', 'zig')
add('V', 'v')
add('D', 'd')
add('Fortran', 'f f90 f95 f03 for')
add('Pascal', 'pas pp')
add('Ada', 'adb ads')
add('Assembly', 'asm s')
add('Shell', 'sh bash zsh ksh')
add('Fish', 'fish')
add('PowerShell', 'ps1 psm1 psd1')
add('Batchfile', 'bat cmd')
add('SQL', 'sql')
add('PLpgSQL', 'pgsql')
add('HTML', 'html htm xhtml')
add('CSS', 'css')
add('SCSS', 'scss')
add('Sass', 'sass')
add('Less', 'less')
add('Stylus', 'styl')
add('Vue', 'vue')
add('Svelte', 'svelte')
add('Astro', 'astro')
add('Handlebars', 'hbs handlebars')
add('Go Template', 'tmpl gotmpl')
add('Jinja', 'jinja j2')
add('Twig', 'twig')
add('Smarty', 'tpl')
add('Emacs Lisp', 'el')
add('Common Lisp', 'lisp lsp')
add('Scheme', 'scm ss')
add('Racket', 'rkt')
add('Vim Script', 'vim')
add('CoffeeScript', 'coffee')
add('HCL', 'hcl tf tfvars')
add('Nix', 'nix')
add('Solidity', 'sol')
add('GLSL', 'glsl vert frag')
add('HLSL', 'hlsl')
add('CUDA', 'cu cuh')
add('Verilog', 'v')
add('SystemVerilog', 'sv svh')
add('VHDL', 'vhd vhdl')
add('Tcl', 'tcl')
add('AWK', 'awk')
add('Makefile', 'mk mak')
add('CMake', 'cmake')
add('Dockerfile', 'dockerfile')
add('Protocol Buffer', 'proto')
add('Thrift', 'thrift')
add('GraphQL', 'graphql gql')
add('TeX', 'tex sty cls')
add('Roff', 'roff')
add('Starlark', 'bzl star')
add('Crystal', 'cr')
add('Hack', 'hack')
add('Gleam', 'gleam')
add('Mojo', 'mojo')
add('WebAssembly', 'wat wast')
// `.v` is V's and Verilog's: linguist needs the content to tell; Verilog is the older use.
BY_EXTENSION.v = 'Verilog'

const BY_NAME: Record<string, string> = {
  Dockerfile: 'Dockerfile',
  Containerfile: 'Dockerfile',
  Makefile: 'Makefile',
  GNUmakefile: 'Makefile',
  makefile: 'Makefile',
  'CMakeLists.txt': 'CMake',
  Rakefile: 'Ruby',
  Gemfile: 'Ruby',
  Jenkinsfile: 'Groovy',
  Vagrantfile: 'Ruby',
  BUILD: 'Starlark',
  'BUILD.bazel': 'Starlark',
  WORKSPACE: 'Starlark',
  Justfile: 'Just',
  justfile: 'Just',
}

/** Vendored code (enry's IsVendor, common cases): dependencies checked in, minified bundles. */
const VENDOR =
  /(^|\/)(node_modules|bower_components|vendors?|third[-_]?party|3rdparty|extern(al)?|Godeps|Carthage|Pods|deps|\.yarn|jspm_packages|cache|dist)\/|(^|\/)jquery[^/]*\.js$|(^|\/)bootstrap[^/]*\.(js|css)$|\.min\.(js|css)$|(^|\/)gradlew(\.bat)?$|(^|\/)mvnw(\.cmd)?$/i
/** Documentation (enry's IsDocumentation). */
const DOCUMENTATION = /(^|\/)(docs?|Documentation|man|examples?|samples?|demos?)\/|(^|\/)(README|CHANGELOG|CHANGES|HISTORY|LICEN[CS]E|COPYING|CONTRIBUTING|AUTHORS|NOTICE)(\.[^/]*)?$/i
/** Generated files (enry's IsGenerated, by path). */
const GENERATED =
  /(\.pb\.go|_pb2\.py|\.pb\.(cc|h)|\.designer\.cs|\.g\.dart|\.freezed\.dart|_generated\.[a-z]+|\.generated\.[a-z]+|(^|\/)package-lock\.json|(^|\/)yarn\.lock|(^|\/)go\.sum|(^|\/)Cargo\.lock|(^|\/)bun\.lockb?|\.map)$/i
/** A file or folder whose name begins with a dot (enry's IsDotFile, applied to every segment). */
const DOT = /(^|\/)\./

/** The language whose bytes `path` counts towards, or null (not counted). */
export function languageOf(path: string): string | null {
  if (DOT.test(path) || VENDOR.test(path) || DOCUMENTATION.test(path) || GENERATED.test(path)) return null
  const name = path.slice(path.lastIndexOf('/') + 1)
  const byName = BY_NAME[name]
  if (byName) return byName
  const dot = name.lastIndexOf('.')
  if (dot <= 0) return null
  return BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? null
}
