import { defineConfig } from "vite";

// `npm run build` writes dist/, which `tablier serve --web-listen ...` serves at / (see README).
// `npm run dev` proxies the API to a local `tablier serve --web-listen 127.0.0.1:8080`.
export default defineConfig({
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
  server: { proxy: { "/tablier.v1.GameService": "http://127.0.0.1:8080" } },
});
