FROM node:20-bookworm-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
# Built with the dev tools, which then leave the image (nothing the service runs imports them).
RUN npm run build && npm prune --omit=dev --no-audit --no-fund
# HOST 0.0.0.0: the worker and health checks reach the api by its service name, not its loopback.
ENV NODE_ENV=production HOST=0.0.0.0
USER node
EXPOSE 3000
# The same command as `npm start` (without its build): the V8 heap capped at SERVICE_HEAP_MB (default 256), its young generation at 8 MiB a semi-space.
CMD ["sh", "-c", "exec node --max-old-space-size=${SERVICE_HEAP_MB:-256} --max-semi-space-size=8 dist/src/main.js"]
