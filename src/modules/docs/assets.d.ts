// The docs page's assets, imported `with { type: 'file' }`: each import is the file's path.
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui-standalone-preset.js' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string
  export default path
}
declare module 'swagger-ui-dist/favicon-32x32.png' {
  const path: string
  export default path
}
