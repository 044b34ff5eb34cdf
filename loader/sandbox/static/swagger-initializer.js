window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/q/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
};
