/**
 * Every key and value of a Redis key prefix, as text: what the no-token checks (the callback-link
 * suite and the fuzz suite) scan, so a token left in any queue, job or stream shows up.
 */
import { Redis } from "ioredis";

/** Every key and value under `prefix` in Redis, as text. */
export async function redisText(redisUrl: string, prefix: string): Promise<string[]> {
  const redis = new Redis(redisUrl);
  const out: string[] = [];
  try {
    let cursor = "0";
    do {
      const [nextCursor, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", "1000");
      cursor = nextCursor;
      for (const key of keys) {
        const type = await redis.type(key);
        const value =
          type === "string"
            ? await redis.get(key)
            : type === "hash"
              ? JSON.stringify(await redis.hgetall(key))
              : type === "list"
                ? JSON.stringify(await redis.lrange(key, 0, -1))
                : type === "zset"
                  ? JSON.stringify(await redis.zrange(key, "0", "-1", "WITHSCORES"))
                  : type === "set"
                    ? JSON.stringify(await redis.smembers(key))
                    : type === "stream"
                      ? JSON.stringify(await redis.xrange(key, "-", "+"))
                      : "";
        out.push(`${key} ${value ?? ""}`);
      }
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
  return out;
}
