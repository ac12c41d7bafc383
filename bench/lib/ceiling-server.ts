/**
 * Bun's ceiling for a point read (PERFORMANCE.md): Bun.serve answering one prepared bun:sqlite
 * read of a user row as JSON, nothing else. Started by bench/lib/ceiling.ts in a process of its
 * own; prints its port on the first line.
 */
import { Database } from 'bun:sqlite'

const db = new Database(':memory:', { strict: true })
db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, lower_name TEXT UNIQUE NOT NULL, full_name TEXT, email TEXT, created_unix INTEGER)')
db.query('INSERT INTO users (lower_name, full_name, email, created_unix) VALUES (?, ?, ?, ?)').run('benchuser', 'Bench User', 'bench@example.com', 1)
const read = db.query<Record<string, unknown>, [string]>('SELECT * FROM users WHERE lower_name = ?')
const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch(request) {
    const name = new URL(request.url).pathname.split('/').pop()!
    const row = read.get(name)
    return row ? Response.json(row) : new Response('not found', { status: 404 })
  },
})
console.log(server.port)
