/**
 * A dependency's `baseUrl`, resolving the string inputs of its `fetch`.
 *
 * @module
 */
/**
 * A dependency's `baseUrl`, resolving string inputs against it as `new URL(input, baseUrl)`
 * would; an absolute path (the common case) is joined to the origin without parsing a URL. The
 * last resolution is kept: a call to the same path as the one before passes fetch the very same
 * string, which V8 has flattened once already (a string joined afresh must be flattened again
 * for the URL parser on every call).
 */
export class BaseUrl {
  readonly #href: string;
  readonly #origin: string;
  #lastInput: string | undefined;
  #lastUrl = '';

  constructor(url: URL) {
    this.#href = url.href;
    this.#origin = url.origin;
  }

  resolve(input: string): string {
    if (input === this.#lastInput) return this.#lastUrl;
    const url =
      input.charCodeAt(0) === 47 && input.charCodeAt(1) !== 47
        ? this.#origin + input
        : new URL(input, this.#href).href;
    this.#lastInput = input;
    this.#lastUrl = url;
    return url;
  }
}
