# Kopek's production image: compiled JavaScript only (dist/), production dependencies only, run as a
# user without rights beyond its data directory. test/recipe/dockerfile.recipe.ts runs these same
# steps outside Docker (`npm run test:recipe`), so keep every path relative to WORKDIR and users
# numeric (1000:1000 is the node image's `node` user); test/recipe/containers.test.ts checks the
# rest (the base image, the variables named, no anonymous volume).
#
# The base is Node 24, an LTS line supported until April 2028 (Kopek runs on Node 20 and later:
# package.json engines; README.md says which versions are tested).

# The build: every dependency, the bundler, `npm run build` → dist/ (the program bundled, and the
# files that ship beside it).
FROM node:24-trixie-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY src ./src
RUN npm run build

# The image: production dependencies, dist/ and the launcher; no sources, no tsx, no compiler.
FROM node:24-trixie-slim AS runtime
ENV NODE_ENV=production
# What Kopek's messages tell the operator to run for a CLI command (e.g. on a store without shops);
# compose.yaml says `docker compose run --rm kopek` instead.
ENV KOPEK_CLI="docker exec <container> node bin/kopek.js"
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /app/dist ./dist
COPY bin ./bin
# The embedded store's directory (used when DATABASE_URL is not set), owned by the service's user.
# No VOLUME: on PostgreSQL nothing is kept here, and a VOLUME would give every container an anonymous
# volume; with the embedded store, mount a named volume on /app/data (docs/operations.md, Containers).
# bin/ and dist/ readable by that user whatever modes the build context gave them (COPY keeps them).
RUN mkdir -p data && chown 1000:1000 data && chmod 700 data && chmod -R a+rX bin dist
USER 1000:1000
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# The `kopek` command, with the Node flags that bound its memory: `docker run IMAGE` serves, and
# `docker run IMAGE shop create --name 'My shop'` (or `docker compose run --rm kopek shop create …`)
# runs that CLI command instead.
ENTRYPOINT ["node", "--max-semi-space-size=16", "--heap-growing-percent=50", "--expose-gc", "bin/kopek.js"]
CMD ["serve"]
