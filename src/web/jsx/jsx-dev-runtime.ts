// The development entry of the JSX runtime (Bun picks it outside production): the same renderer.
export { Fragment, jsx, jsxDEV, jsxs, type JSX } from './jsx-runtime'
