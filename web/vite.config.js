// Builds the dashboard into dist/ with stable names (index.html, assets/app.js, assets/app.css),
// no source maps and no external requests: everything the page needs is embedded into gpudoctor.
import { defineConfig } from "vite";

export default defineConfig({
  base: "/",
  build: {
    outDir: process.env.GPUDOCTOR_WEB_OUT || "dist",
    emptyOutDir: true,
    sourcemap: false,
    assetsInlineLimit: 0,
    rollupOptions: {
      output: {
        entryFileNames: "assets/app.js",
        chunkFileNames: "assets/[name].js",
        assetFileNames: "assets/app[extname]",
      },
    },
  },
});
