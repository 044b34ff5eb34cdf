window.onload = function () {
  window.ui = SwaggerUIBundle({
    url: "/q/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    validatorUrl: null, // the default badge calls validator.swagger.io; this page stays offline
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
};
