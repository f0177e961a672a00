// entityservice: the Go twin of examples/entity_service.c, the service bench suite's peer,
// built the way a Go shop would build it from Debian's packages in GOPATH mode: net/http,
// pgx v4 (pgxpool), redigo and vmihailenco/msgpack v5. Same table, same routes, same cache
// rules as far as Go goes: a local map with a TTL (30 s, "not found" 1 s) in front of Redis
// (10 min), one load per key at a time (single-flight), and invalidation by DEL + PUBLISH
// that every instance's subscriber applies to its local map.
//
//	GET /users/ID   JSON or MessagePack by Accept (406 neither, 404 no row)
//	PUT /users/ID   a JSON or MessagePack body by Content-Type; upsert, then invalidate
//
// usage: entityservice PORT TABLE [cold]   (WK_PG_DSN, WK_REDIS_URL; PORT 0: any free port,
// printed as "listening on N"; cold: no local map, every GET goes to Redis)
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/jackc/pgx/v4"
	"github.com/jackc/pgx/v4/pgxpool"
	"github.com/vmihailenco/msgpack/v5"
)

// User is the row, with the field names of the C service's schema on both wires.
type User struct {
	Username string                 `json:"username" msgpack:"username"`
	Password *string                `json:"password" msgpack:"password"`
	Age      *int32                 `json:"age" msgpack:"age"`
	Enabled  bool                   `json:"enabled" msgpack:"enabled"`
	Metadata map[string]interface{} `json:"metadata" msgpack:"metadata"`
}

// entry is what the local map holds: the user and its MessagePack (nil user: no row).
type entry struct {
	user    *User
	mp      []byte
	expires time.Time
}

type call struct {
	done chan struct{}
	e    *entry
	err  error
}

var (
	db              *pgxpool.Pool
	rpool           *redis.Pool
	table           string
	cold            bool
	mu              sync.Mutex
	local           = map[string]*entry{}
	flights         = map[string]*call{}
	errNotFound     = errors.New("not found")
	localTTL        = 30 * time.Second
	negativeTTL     = time.Second
	sharedTTLSecond = 600
)

// Keys and the invalidation channel are the table's, with a "go" suffix: the Go and C
// services never read each other's entries.
func key(id string) string { return table + "go:user:v1:" + id }

func channel() string { return table + "go:invalidate" }

// marshal is msgpack.Marshal with integers in their shortest form, as wirekit writes them
// (the same 72 bytes for the seed's record).
func marshal(v interface{}) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	err := enc.Encode(v)
	return buf.Bytes(), err
}

// numbers turns json.Number leaves into int64 or float64, as jsonb's numbers are.
func numbers(v interface{}) interface{} {
	switch t := v.(type) {
	case json.Number:
		if i, err := t.Int64(); err == nil {
			return i
		}
		f, _ := t.Float64()
		return f
	case map[string]interface{}:
		for k, x := range t {
			t[k] = numbers(x)
		}
	case []interface{}:
		for i, x := range t {
			t[i] = numbers(x)
		}
	}
	return v
}

// load reads the row from PostgreSQL.
func load(id string) (*User, error) {
	var u User
	var meta []byte
	err := db.QueryRow(context.Background(), "SELECT username, password, age, enabled, metadata FROM "+
		table+" WHERE id = $1", id).Scan(&u.Username, &u.Password, &u.Age, &u.Enabled, &meta)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errNotFound
	}
	if err != nil {
		return nil, err
	}
	d := json.NewDecoder(bytes.NewReader(meta))
	d.UseNumber()
	if err := d.Decode(&u.Metadata); err != nil {
		return nil, err
	}
	numbers(u.Metadata)
	return &u, nil
}

// fetch is the miss path: Redis, then PostgreSQL (filling Redis).
func fetch(id string) (*entry, error) {
	rc := rpool.Get()
	defer rc.Close()
	mp, err := redis.Bytes(rc.Do("GET", key(id)))
	if err == nil {
		var u User
		if err := msgpack.Unmarshal(mp, &u); err != nil {
			return nil, err
		}
		return &entry{user: &u, mp: mp}, nil
	}
	if err != redis.ErrNil {
		return nil, err
	}
	u, err := load(id)
	if err == errNotFound {
		return &entry{}, nil
	}
	if err != nil {
		return nil, err
	}
	if mp, err = marshal(u); err != nil {
		return nil, err
	}
	if _, err := rc.Do("SET", key(id), mp, "EX", sharedTTLSecond, "NX"); err != nil {
		return nil, err
	}
	return &entry{user: u, mp: mp}, nil
}

// get is the cache: the local map, then one fetch per key at a time.
func get(id string) (*entry, error) {
	mu.Lock()
	if e, ok := local[id]; ok && time.Now().Before(e.expires) {
		mu.Unlock()
		return e, nil
	}
	if c, ok := flights[id]; ok {
		mu.Unlock()
		<-c.done
		return c.e, c.err
	}
	c := &call{done: make(chan struct{})}
	flights[id] = c
	mu.Unlock()
	c.e, c.err = fetch(id)
	mu.Lock()
	delete(flights, id)
	if c.err == nil && !cold {
		ttl := localTTL
		if c.e.user == nil {
			ttl = negativeTTL
		}
		c.e.expires = time.Now().Add(ttl)
		local[id] = c.e
	}
	mu.Unlock()
	close(c.done)
	return c.e, c.err
}

// negotiate returns "json", "msgpack" or "" (406): the most specific matching range gives
// each offer its quality; ties keep the server's order (JSON first).
func negotiate(accept string) (string, string) {
	if accept == "" {
		return "json", "application/json"
	}
	offers := []struct{ format, typ string }{{"json", "application/json"},
		{"msgpack", "application/vnd.msgpack"}, {"msgpack", "application/msgpack"},
		{"msgpack", "application/x-msgpack"}}
	best, bestQ := -1, 0.0
	for i, o := range offers {
		spec, q := -1, 0.0
		for _, r := range strings.Split(accept, ",") {
			parts := strings.Split(r, ";")
			mt := strings.ToLower(strings.TrimSpace(parts[0]))
			rq := 1.0
			for _, p := range parts[1:] {
				if kv := strings.SplitN(strings.TrimSpace(p), "=", 2); len(kv) == 2 && strings.EqualFold(kv[0], "q") {
					rq, _ = strconv.ParseFloat(kv[1], 64)
				}
			}
			s := -1
			switch {
			case mt == o.typ:
				s = 2
			case mt == "application/*":
				s = 1
			case mt == "*/*":
				s = 0
			}
			if s > spec || (s == spec && s >= 0 && rq > q) {
				spec, q = s, rq
			}
		}
		if spec >= 0 && q > bestQ {
			best, bestQ = i, q
		}
	}
	if best < 0 {
		return "", ""
	}
	return offers[best].format, offers[best].typ
}

func getUser(w http.ResponseWriter, r *http.Request, id string) {
	format, ctype := negotiate(r.Header.Get("Accept"))
	if format == "" {
		w.WriteHeader(http.StatusNotAcceptable)
		return
	}
	e, err := get(id)
	if err != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
		return
	}
	if e.user == nil {
		w.WriteHeader(http.StatusNotFound)
		return
	}
	body := e.mp
	if format == "json" {
		if body, err = json.Marshal(e.user); err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
	}
	w.Header().Set("Content-Type", ctype)
	w.Write(body)
}

func putUser(w http.ResponseWriter, r *http.Request, id string) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	var u User
	ct := strings.ToLower(strings.TrimSpace(strings.Split(r.Header.Get("Content-Type"), ";")[0]))
	switch ct {
	case "application/json":
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		err = d.Decode(&u)
		numbers(u.Metadata)
	case "application/vnd.msgpack", "application/msgpack", "application/x-msgpack":
		err = msgpack.Unmarshal(body, &u)
	default:
		w.WriteHeader(http.StatusUnsupportedMediaType)
		return
	}
	if err != nil || u.Username == "" {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	meta, _ := json.Marshal(u.Metadata)
	if u.Metadata == nil {
		meta = []byte("{}")
	}
	_, err = db.Exec(context.Background(), "INSERT INTO "+table+" VALUES ($1, $2, $3, $4, $5, $6) "+
		"ON CONFLICT (id) DO UPDATE SET username = $2, password = $3, age = $4, enabled = $5, "+
		"metadata = $6", id, u.Username, u.Password, u.Age, u.Enabled, string(meta))
	if err == nil {
		rc := rpool.Get()
		_, err = rc.Do("DEL", key(id))
		if err == nil {
			_, err = rc.Do("PUBLISH", channel(), id)
		}
		rc.Close()
	}
	mu.Lock()
	delete(local, id)
	mu.Unlock()
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// subscribe applies every instance's invalidations to the local map.
func subscribe(url string) {
	for {
		c, err := redis.DialURL(url)
		if err == nil {
			psc := redis.PubSubConn{Conn: c}
			if err = psc.Subscribe(channel()); err == nil {
				for err == nil {
					switch m := psc.Receive().(type) {
					case redis.Message:
						mu.Lock()
						delete(local, string(m.Data))
						mu.Unlock()
					case error:
						err = m
					}
				}
			}
			c.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func main() {
	dsn, url := os.Getenv("WK_PG_DSN"), os.Getenv("WK_REDIS_URL")
	if dsn == "" || url == "" || len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "entityservice: needs WK_PG_DSN, WK_REDIS_URL, PORT and TABLE")
		os.Exit(77)
	}
	table, cold = os.Args[2], len(os.Args) > 3 && os.Args[3] == "cold"
	var err error
	if db, err = pgxpool.Connect(context.Background(), dsn); err != nil {
		fmt.Fprintln(os.Stderr, "entityservice:", err)
		os.Exit(1)
	}
	rpool = &redis.Pool{MaxIdle: 256, Dial: func() (redis.Conn, error) { return redis.DialURL(url) }}
	go subscribe(url)
	ln, err := net.Listen("tcp", "127.0.0.1:"+os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "entityservice:", err)
		os.Exit(1)
	}
	http.HandleFunc("/users/", func(w http.ResponseWriter, r *http.Request) {
		id := strings.TrimPrefix(r.URL.Path, "/users/")
		if _, err := strconv.ParseInt(id, 10, 64); err != nil || len(id) > 18 {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		switch r.Method {
		case http.MethodGet:
			getUser(w, r, id)
		case http.MethodPut:
			putUser(w, r, id)
		default:
			w.WriteHeader(http.StatusMethodNotAllowed)
		}
	})
	fmt.Printf("listening on %d\n", ln.Addr().(*net.TCPAddr).Port)
	os.Stdout.Sync()
	fmt.Fprintln(os.Stderr, http.Serve(ln, nil))
	os.Exit(1)
}
