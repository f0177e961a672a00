// seedbench: the Go side of the schema suite's seed benchmark (SEEDS.md section 3), written
// from its description: one User record, serialized and then deserialized N times with
// vmihailenco/msgpack v5, encoding/json and encoding/gob behind one Serializer interface.
// The schema suite (bench_schema.c) runs it as an out-of-process peer in the same run as
// wirekit's rows and records what it prints:
//
//	size <format> <bytes>              the record's encoded size
//	hex json <hex>                     the JSON bytes, checked against wirekit's
//	ns <format> <encode|decode> <ns>   wall ns per operation: the median of REPS loops of N
//
// usage: seedbench N REPS. Built in GOPATH mode from Debian's packages (no module download).
package main

import (
	"bytes"
	"encoding/gob"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// User is the seed's record: five fields, each with a lowercase json tag.
type User struct {
	Username string                 `json:"username"`
	Password string                 `json:"password"`
	Age      int                    `json:"age"`
	Enabled  bool                   `json:"enabled"`
	Metadata map[string]interface{} `json:"metadata"`
}

var user = User{
	Username: "root",
	Password: "secret",
	Age:      20,
	Enabled:  true,
	Metadata: map[string]interface{}{"hello": "world", "int": 10},
}

// Serializer is the seed's interface: one value to bytes and back.
type Serializer interface {
	Serialize(v interface{}) ([]byte, error)
	Deserialize(b []byte, v interface{}) error
}

type jsonSerializer struct{}

func (jsonSerializer) Serialize(v interface{}) ([]byte, error) { return json.Marshal(v) }
func (jsonSerializer) Deserialize(b []byte, v interface{}) error {
	return json.Unmarshal(b, v)
}

type msgpackSerializer struct{}

func (msgpackSerializer) Serialize(v interface{}) ([]byte, error) { return msgpack.Marshal(v) }
func (msgpackSerializer) Deserialize(b []byte, v interface{}) error {
	return msgpack.Unmarshal(b, v)
}

// gobSerializer uses a fresh buffer and encoder (decoder) per call, as the seed did: gob
// sends its type description with every stream, which is most of its cost and size.
type gobSerializer struct{}

func (gobSerializer) Serialize(v interface{}) ([]byte, error) {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(v)
	return buf.Bytes(), err
}
func (gobSerializer) Deserialize(b []byte, v interface{}) error {
	return gob.NewDecoder(bytes.NewReader(b)).Decode(v)
}

// median of the wall ns per op of reps runs of f(n).
func median(reps, n int, f func(n int) int) (float64, int) {
	runs := make([]float64, reps)
	sink := 0
	for r := range runs {
		t0 := time.Now()
		sink += f(n)
		runs[r] = float64(time.Since(t0).Nanoseconds()) / float64(n)
	}
	sort.Float64s(runs)
	return runs[reps/2], sink
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, "seedbench: "+format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) != 3 {
		fail("usage: seedbench N REPS")
	}
	n, err1 := strconv.Atoi(os.Args[1])
	reps, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil || n <= 0 || reps <= 0 {
		fail("N and REPS must be positive integers")
	}
	formats := []struct {
		name string
		s    Serializer
	}{{"msgpack", msgpackSerializer{}}, {"json", jsonSerializer{}}, {"gob", gobSerializer{}}}
	sink := 0
	for _, f := range formats {
		b, err := f.s.Serialize(&user)
		if err != nil {
			fail("%s: %v", f.name, err)
		}
		var back User
		if err := f.s.Deserialize(b, &back); err != nil || back.Username != "root" ||
			back.Age != 20 || !back.Enabled || back.Metadata["hello"] != "world" {
			fail("%s: the record did not read back (%v)", f.name, err)
		}
		fmt.Printf("size %s %d\n", f.name, len(b))
		if f.name == "json" {
			fmt.Printf("hex json %s\n", hex.EncodeToString(b))
		}
		enc, s1 := median(reps, n, func(n int) int {
			total := 0
			for i := 0; i < n; i++ {
				out, _ := f.s.Serialize(&user)
				total += len(out)
			}
			return total
		})
		var u User // one reused variable, as in the seed
		dec, s2 := median(reps, n, func(n int) int {
			total := 0
			for i := 0; i < n; i++ {
				_ = f.s.Deserialize(b, &u)
				total += u.Age
			}
			return total
		})
		sink += s1 + s2
		fmt.Printf("ns %s encode %.2f\nns %s decode %.2f\n", f.name, enc, f.name, dec)
	}
	if sink == 42 {
		fmt.Println("#")
	}
}
