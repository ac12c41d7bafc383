import type { Config } from '../config'

/** `{base}path`: web URLs (html_url, clone_url, ...). `path` has no leading slash. */
export const webUrl = (config: Config, path: string): string => config.baseUrl + path

/** `{base}api/v1/path`: API URLs in records. */
export const apiUrl = (config: Config, path: string): string => config.baseUrl + 'api/v1/' + path

/** Where the error bodies point readers to. */
export const docsUrl = (config: Config): string => config.baseUrl + 'api/swagger'
