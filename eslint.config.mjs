// The page's scripts (static/*.js): plain browser scripts sharing one namespace, window.sitegen.
// tests/test_quality.py runs eslint with this file; .ci/run installs eslint from npm.
export default [
  {
    files: ["static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: {
        window: "readonly", document: "readonly", navigator: "readonly", location: "readonly", history: "readonly",
        console: "readonly", setTimeout: "readonly", clearTimeout: "readonly", setInterval: "readonly",
        clearInterval: "readonly", requestAnimationFrame: "readonly", cancelAnimationFrame: "readonly",
        requestIdleCallback: "readonly", cancelIdleCallback: "readonly", getComputedStyle: "readonly",
        matchMedia: "readonly", localStorage: "readonly", sessionStorage: "readonly", URL: "readonly",
        URLSearchParams: "readonly", EventSource: "readonly", MutationObserver: "readonly",
        IntersectionObserver: "readonly", ResizeObserver: "readonly", CSS: "readonly", Node: "readonly",
        NodeFilter: "readonly", Element: "readonly", HTMLElement: "readonly", Event: "readonly",
        CustomEvent: "readonly", KeyboardEvent: "readonly", Blob: "readonly", TextDecoder: "readonly",
        TextEncoder: "readonly", performance: "readonly", fetch: "readonly", atob: "readonly", btoa: "readonly",
        Image: "readonly", DOMParser: "readonly", Range: "readonly", screen: "readonly", self: "readonly",
        queueMicrotask: "readonly", structuredClone: "readonly", alert: "readonly", print: "readonly",
        scrollTo: "readonly", innerHeight: "readonly", innerWidth: "readonly", ClipboardItem: "readonly",
        DOMException: "readonly", Highlight: "readonly", DecompressionStream: "readonly", Response: "readonly", Promise: "readonly", WeakMap: "readonly", Map: "readonly", Set: "readonly",
      },
    },
    rules: {
      // Every name a script uses is declared: the only shared global is window.sitegen.
      "no-undef": "error",
      "no-implicit-globals": "error",
      "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
      "no-redeclare": "error",
      "no-shadow-restricted-names": "error",
      "no-dupe-keys": "error",
      "no-unreachable": "error",
      "no-unsafe-negation": "error",
      "no-self-assign": "error",
      "no-cond-assign": ["error", "except-parens"],
      "use-isnan": "error",
      "valid-typeof": "error",
      "eqeqeq": ["error", "smart"],
      "no-restricted-properties": [
        "error",
        { object: "window", property: "eval", message: "no eval in pages" },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "AssignmentExpression > MemberExpression.left[object.name='window'][property.name!='sitegen']",
          message: "the page's scripts share one global, window.sitegen; put it there",
        },
      ],
    },
  },
];
