import { defineConfig } from "vite";
import { viteSingleFile } from "vite-plugin-singlefile";

// One self-contained index.html (JS and CSS inlined): the C++ build embeds it into the binary and
// the report writer inlines the study's data into it (report.html opens offline, no CDN).
export default defineConfig({
  base: "./",
  plugins: [viteSingleFile({ removeViteModuleLoader: true })],
  build: {
    target: "es2020",
    outDir: "dist",
    assetsInlineLimit: 100_000_000,
    cssCodeSplit: false,
    reportCompressedSize: false,
    chunkSizeWarningLimit: 5000,
  },
  test: {
    include: ["test/**/*.test.ts"],
    environment: "node",
  },
} as any);
