package main

import (
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/misgrid/misgrid/mis"
)

func TestZZSim(t *testing.T) {
	specs := os.Getenv("SIM")
	if specs == "" {
		t.Skip()
	}
	for _, spec := range strings.Split(specs, ",") {
		g, _, err := generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		n := g.N()
		pk := mis.Hash
		if os.Getenv("PRIO") == "degree" {
			pk = mis.Degree
		}
		keys, _ := mis.Keys(g, mis.Priority{Kind: pk})
		order := mis.Order(keys)
		rank := make([]int, n)
		for i, v := range order {
			rank[v] = i
		}
		nnz := len(g.Adj)
		for _, scheme := range []string{"u8", "u16", "u32", "g16", "g24", "g32"} {
			var B int
			fmt.Sscanf(scheme[1:], "%d", &B)
			th := make([]int, B+1) // rank thresholds
			for k := 0; k <= B; k++ {
				f := float64(k) / float64(B)
				if scheme[0] == 'g' {
					f = math.Pow(f, 2)
				}
				th[k] = int(f * float64(n))
			}
			th[B] = n
			state := make([]int8, n) // 0 und 1 in 2 out
			var cand, mem, scan, push, blocked, maxdepth, sumdepth int
			depth := make([]int, n)
			for k := 0; k < B; k++ {
				var cs []int32
				for i := th[k]; i < th[k+1]; i++ {
					v := order[i]
					if state[v] == 0 {
						cs = append(cs, v)
					}
				}
				incand := map[int32]bool{}
				for _, v := range cs {
					incand[v] = true
				}
				cand += len(cs)
				// cs in decreasing key order; exact greedy within bucket
				bd := 0
				for _, v := range cs {
					d := 0
					nb := 0
					rows := append([]int32{v}, g.Neighbors(v)...)
					for _, u := range rows {
						scan += len(g.Neighbors(u)) + 1
						for _, x := range append([]int32{u}, g.Neighbors(u)...) {
							if x != v && incand[x] && rank[x] < rank[v] {
								nb++
								if depth[x]+1 > d {
									d = depth[x] + 1
								}
							}
						}
					}
					depth[v] = d
					if d > bd {
						bd = d
					}
					sumdepth += d
					if nb > 0 {
						blocked++
					}
					if state[v] != 0 {
						continue
					}
					state[v] = 1
					mem++
					for _, u := range rows {
						push += len(g.Neighbors(u)) + 1
						for _, x := range append([]int32{u}, g.Neighbors(u)...) {
							if x != v {
								state[x] = 2
							}
						}
					}
				}
				if bd > maxdepth {
					maxdepth = bd
				}
			}
			_ = sort.Ints
			fmt.Printf("%s %s n=%d nnz=%d: cand=%d (%.3f n) members=%d blocked=%d maxdepth=%d scan=%.2f nnz push=%.2f nnz\n",
				spec, scheme, n, nnz, cand, float64(cand)/float64(n), mem, blocked, maxdepth, float64(scan)/float64(nnz), float64(push)/float64(nnz))
		}
	}
}
