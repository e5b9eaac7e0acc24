import { defineConfig } from "vite";

// `npm run build` writes dist/, which `tablier serve --web-listen ...` serves at / (see README).
// `npm run dev` proxies the API to the server's browser address: $TABLIER_WEB_URL, by default
// a local `tablier serve --web-listen 127.0.0.1:8080`.
const target = process.env.TABLIER_WEB_URL || "http://127.0.0.1:8080";

export default defineConfig({
  base: "./",
  build: { outDir: "dist", emptyOutDir: true, sourcemap: false },
  server: { proxy: { "/tablier.v1.GameService": { target, changeOrigin: true }, "/tablier.v1.PlayerService": { target, changeOrigin: true } } },
});
