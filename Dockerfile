# The slotflow package as it is released: `npm pack` of this tree (dist/ built by `prepare`),
# installed globally in a clean image, so containers run the built package, never the source
# tree, and install nothing when they start. docker-compose.yml's `pooler` profile runs it.
FROM node:22-bookworm-slim AS pack
WORKDIR /src
COPY . .
RUN npm ci --no-audit --no-fund && npm pack --pack-destination /out

FROM node:22-bookworm-slim
COPY --from=pack /out/ /tmp/pack/
RUN npm install --global --omit=dev --no-audit --no-fund /tmp/pack/slotflow-*.tgz && rm -rf /tmp/pack /root/.npm
USER node
ENV NODE_ENV=production
ENTRYPOINT ["slotflow"]
CMD ["--help"]
