// Starts Swagger UI (loaded before this file) on the coordinator's own OpenAPI document.
// "Try it out" is off: this page never holds an API key; the console and the clients do the calling.
window.addEventListener("DOMContentLoaded", () => {
  window.ui = SwaggerUIBundle({
    url: new URL("/v1/openapi.json", window.location.href).href,
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null,
    supportedSubmitMethods: [],
    defaultModelsExpandDepth: 0,
    docExpansion: "list",
    filter: true,
  });
});
