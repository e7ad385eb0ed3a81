package mesh

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
)

// gmshTypes maps Gmsh element type numbers to ElementType.
var gmshTypes = map[int64]ElementType{
	1: Line2, 2: Tri3, 3: Quad4, 4: Tet4, 5: Hex8, 6: Prism6, 7: Pyramid5,
	8: Line3, 9: Tri6, 10: Quad9, 11: Tet10, 12: Hex27, 15: Point1,
}

// ReadGmsh reads a mesh in Gmsh MSH 4.1 ASCII format: $MeshFormat,
// $PhysicalNames, $Entities, $Nodes and $Elements. Other sections are
// skipped, and so are element blocks of types this package does not know
// (such as the 20-node hexahedron), since mesh graphs need none of them.
// $Nodes must come before $Elements, as Gmsh writes them. Older (2.2)
// and binary files are refused with an error that says how to convert
// them. Partitioned files read as one mesh; their partition entities are
// not in $Entities, so their blocks get Group 0.
//
// Node tags may be sparse: nodes get dense 0-based ids in file order, and
// Mesh.NodeTags keeps the tags unless they were simply 1..n. Every element
// block of the file becomes one ElementBlock, lower-dimensional ones
// (boundary lines and faces, points) included, with Group set to the first
// physical tag of its entity. Element nodes keep Gmsh's ordering. Dim is
// the highest dimension among the elements (2 or 3), and only the first
// Dim coordinates of each node are kept, so a 2D mesh is taken to lie in
// the xy-plane.
func ReadGmsh(r io.Reader) (*Mesh, error) {
	if r == nil {
		return nil, errNilIO("ReadGmsh", "reader")
	}
	p := &gmshParser{s: newTextScanner(r, "msh"), hint: remainingBytes(r)}
	return p.parse()
}

type gmshParser struct {
	s    *textScanner
	hint int64 // bytes of input, or -1
	line int   // line of the last token

	seen        map[string]bool
	names       map[int]string
	entityGroup map[[2]int64]int // (dim, entity tag) → first physical tag
	coords      []float64        // 3 per node
	tags        []int64
	index       tagIndex
	blocks      []ElementBlock
}

func (p *gmshParser) parse() (*Mesh, error) {
	p.seen = map[string]bool{}
	for {
		tok, line := p.s.token()
		p.line = line
		if tok == nil {
			break
		}
		name := string(tok)
		if len(p.seen) == 0 && name != "$MeshFormat" {
			return nil, p.errorf("file starts with %.40q, want $MeshFormat", tok)
		}
		if name[0] != '$' || bytes.HasPrefix(tok, []byte("$End")) {
			return nil, p.errorf("unexpected %.40q between sections", tok)
		}
		if p.seen[name] {
			return nil, p.errorf("second %s section", name)
		}
		p.seen[name] = true
		var err error
		switch name {
		case "$MeshFormat":
			err = p.meshFormat()
		case "$PhysicalNames":
			err = p.physicalNames()
		case "$Entities":
			err = p.entities()
		case "$Nodes":
			err = p.nodes()
		case "$Elements":
			if !p.seen["$Nodes"] {
				return nil, p.errorf("$Elements before $Nodes")
			}
			err = p.elements()
		default:
			err = p.skipSection(name)
		}
		if err != nil {
			return nil, err
		}
	}
	if p.s.err != nil {
		return nil, p.s.eofError(p.s.last, "after the last section")
	}
	for _, sec := range []string{"$MeshFormat", "$Nodes", "$Elements"} {
		if !p.seen[sec] {
			return nil, p.errorf("file has no %s section", sec)
		}
	}
	return p.mesh()
}

func (p *gmshParser) mesh() (*Mesh, error) {
	m := &Mesh{Groups: p.names}
	for _, b := range p.blocks {
		m.Dim = max(m.Dim, b.Type.Dim())
	}
	if m.Dim < 2 {
		return nil, p.errorf("mesh has no 2D or 3D elements")
	}
	n := len(p.tags)
	m.Coords = p.coords
	if m.Dim == 2 {
		for v := 0; v < n; v++ {
			m.Coords[2*v], m.Coords[2*v+1] = p.coords[3*v], p.coords[3*v+1]
		}
		m.Coords = slices.Clip(m.Coords[:2*n])
	}
	for i, t := range p.tags {
		if t != int64(i)+1 {
			m.NodeTags = p.tags
			break
		}
	}
	m.Blocks = p.blocks
	for i, b := range m.Blocks {
		// The block's entity has the dimension of its elements.
		m.Blocks[i].Group = p.entityGroup[[2]int64{int64(b.Type.Dim()), int64(b.Entity)}]
	}
	return m, nil
}

func (p *gmshParser) meshFormat() error {
	tok, err := p.token("version")
	if err != nil {
		return err
	}
	if string(tok) != "4.1" {
		return p.errorf("MSH version %.20q is not supported, want 4.1 (gmsh -format msh41)", tok)
	}
	ft, err := p.int("file type", 0, 1)
	if err != nil {
		return err
	}
	if ft != 0 {
		return p.errorf("binary MSH is not supported, save as ASCII (gmsh option -bin 0)")
	}
	if _, err := p.int("data size", 0, math.MaxInt32); err != nil {
		return err
	}
	return p.end("$EndMeshFormat")
}

func (p *gmshParser) physicalNames() error {
	n, err := p.int("number of physical names", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	p.names = map[int]string{}
	for i := int64(0); i < n; i++ {
		if _, err := p.int("physical dimension", 0, 3); err != nil {
			return err
		}
		tag, err := p.int("physical tag", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		name, err := p.quoted()
		if err != nil {
			return err
		}
		// Tags are per dimension in Gmsh but Mesh.Groups is keyed by tag
		// alone: the first name wins.
		if _, dup := p.names[int(tag)]; !dup {
			p.names[int(tag)] = name
		}
	}
	return p.end("$EndPhysicalNames")
}

func (p *gmshParser) entities() error {
	var counts [4]int64
	for d := range counts {
		c, err := p.int("number of entities", 0, math.MaxInt64)
		if err != nil {
			return err
		}
		counts[d] = c
	}
	p.entityGroup = map[[2]int64]int{}
	for d, c := range counts {
		for i := int64(0); i < c; i++ {
			tag, err := p.int("entity tag", math.MinInt32, math.MaxInt32)
			if err != nil {
				return err
			}
			nbox := 6 // bounding box
			if d == 0 {
				nbox = 3 // a point's coordinates
			}
			for k := 0; k < nbox; k++ {
				if _, err := p.float("entity bounding box"); err != nil {
					return err
				}
			}
			nphys, err := p.int("number of physical tags", 0, math.MaxInt64)
			if err != nil {
				return err
			}
			for k := int64(0); k < nphys; k++ {
				pt, err := p.int("physical tag", math.MinInt32, math.MaxInt32)
				if err != nil {
					return err
				}
				if k == 0 {
					p.entityGroup[[2]int64{int64(d), tag}] = int(pt)
				}
			}
			if d == 0 {
				continue
			}
			nb, err := p.int("number of bounding entities", 0, math.MaxInt64)
			if err != nil {
				return err
			}
			for k := int64(0); k < nb; k++ {
				if _, err := p.int("bounding entity tag", math.MinInt32, math.MaxInt32); err != nil {
					return err
				}
			}
		}
	}
	return p.end("$EndEntities")
}

func (p *gmshParser) nodes() error {
	nblocks, err := p.int("number of node blocks", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	total, err := p.int("number of nodes", 0, math.MaxInt32)
	if err != nil {
		return err
	}
	minTag, err := p.int("minimum node tag", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	maxTag, err := p.int("maximum node tag", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	// The shortest node is "1\n0 0 0\n": trust the count only that far.
	est := capEstimate(total, p.hint, 8)
	p.tags = make([]int64, 0, est)
	p.coords = make([]float64, 0, 3*est)
	for b := int64(0); b < nblocks; b++ {
		dim, err := p.int("entity dimension", 0, 3)
		if err != nil {
			return err
		}
		if _, err := p.int("entity tag", math.MinInt32, math.MaxInt32); err != nil {
			return err
		}
		param, err := p.int("parametric flag", 0, 1)
		if err != nil {
			return err
		}
		count, err := p.int("number of nodes in block", 0, total-int64(len(p.tags)))
		if err != nil {
			return err
		}
		first := len(p.tags)
		for i := int64(0); i < count; i++ {
			tag, err := p.int("node tag", max(minTag, 1), maxTag)
			if err != nil {
				return err
			}
			if !p.index.add(tag, int32(len(p.tags))) {
				return p.errorf("node tag %d defined twice", tag)
			}
			p.tags = append(p.tags, tag)
		}
		extra := int(param * dim) // parametric coordinates, dropped
		for range p.tags[first:] {
			for k := 0; k < 3+extra; k++ {
				x, err := p.float("node coordinate")
				if err != nil {
					return err
				}
				if k < 3 {
					p.coords = append(p.coords, x)
				}
			}
		}
	}
	if int64(len(p.tags)) != total {
		tok, line := p.s.token()
		p.line = line
		return p.errorf("node blocks hold %d nodes, header says %d (at %.20q)", len(p.tags), total, tok)
	}
	return p.end("$EndNodes")
}

func (p *gmshParser) elements() error {
	nblocks, err := p.int("number of element blocks", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	total, err := p.int("number of elements", 0, math.MaxInt64)
	if err != nil {
		return err
	}
	for k := 0; k < 2; k++ {
		if _, err := p.int("element tag bound", 0, math.MaxInt64); err != nil {
			return err
		}
	}
	seen := int64(0)
	for b := int64(0); b < nblocks; b++ {
		dim, err := p.int("entity dimension", 0, 3)
		if err != nil {
			return err
		}
		entity, err := p.int("entity tag", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		gt, err := p.int("element type", math.MinInt32, math.MaxInt32)
		if err != nil {
			return err
		}
		count, err := p.int("number of elements in block", 0, total-seen)
		if err != nil {
			return err
		}
		seen += count
		typ, known := gmshTypes[gt]
		if !known {
			if err := p.skipLines(count); err != nil {
				return err
			}
			continue
		}
		if typ.Dim() != int(dim) {
			return p.errorf("element type %d (%v) in an entity of dimension %d", gt, typ, dim)
		}
		k := typ.Nodes()
		// Each node tag takes at least two bytes of input.
		conn := make([]int32, 0, capEstimate(count*int64(k), p.hint, 2))
		for e := int64(0); e < count; e++ {
			if _, err := p.int("element tag", 0, math.MaxInt64); err != nil {
				return err
			}
			for j := 0; j < k; j++ {
				tag, err := p.int("element node tag", 1, math.MaxInt64)
				if err != nil {
					return err
				}
				id, ok := p.index.get(tag)
				if !ok {
					return p.errorf("element node tag %d is not in $Nodes", tag)
				}
				conn = append(conn, id)
			}
		}
		p.blocks = append(p.blocks, ElementBlock{Type: typ, Conn: conn, Entity: int(entity)})
	}
	if seen != total {
		tok, line := p.s.token()
		p.line = line
		return p.errorf("element blocks hold %d elements, header says %d (at %.20q)", seen, total, tok)
	}
	return p.end("$EndElements")
}

// skipLines skips the rest of the current line and n more lines.
func (p *gmshParser) skipLines(n int64) error {
	if rest, _, _ := p.s.readLine(); len(bytes.TrimSpace(rest)) != 0 {
		return p.errorf("unexpected %.20q after the element block header", rest)
	}
	for i := int64(0); i < n; i++ {
		line, no, ok := p.s.readLine()
		p.line = no
		if !ok {
			return p.s.eofError(no, fmt.Sprintf("file ends in an element block, %d of %d elements read", i, n))
		}
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("$")) {
			return p.errorf("element block ends after %d of %d elements", i, n)
		}
	}
	return nil
}

// skipSection skips lines up to the end marker of an unknown section.
func (p *gmshParser) skipSection(name string) error {
	start := p.line
	end := []byte("$End" + name[1:])
	for {
		line, no, ok := p.s.readLine()
		p.line = no
		if !ok {
			return p.s.eofError(no, fmt.Sprintf("section %.40s opened on line %d never ends", name, start))
		}
		if bytes.Equal(bytes.TrimSpace(line), end) {
			return nil
		}
	}
}

func (p *gmshParser) token(what string) ([]byte, error) {
	tok, line := p.s.token()
	p.line = line
	if tok == nil {
		return nil, p.s.eofError(line, "file ends where "+what+" should be")
	}
	return tok, nil
}

func (p *gmshParser) end(marker string) error {
	tok, err := p.token(marker)
	if err != nil {
		return err
	}
	if string(tok) != marker {
		return p.errorf("found %.20q where %s should be", tok, marker)
	}
	return nil
}

// int reads an integer token and checks it lies in [lo, hi].
func (p *gmshParser) int(what string, lo, hi int64) (int64, error) {
	tok, err := p.token(what)
	if err != nil {
		return 0, err
	}
	v, ok := parseInt(tok)
	if !ok {
		return 0, p.errorf("%s %.20q is not an integer", what, tok)
	}
	if v < lo || v > hi {
		return 0, p.errorf("%s %d out of range [%d,%d]", what, v, lo, hi)
	}
	return v, nil
}

func (p *gmshParser) float(what string) (float64, error) {
	tok, err := p.token(what)
	if err != nil {
		return 0, err
	}
	v, err := parseFloat(tok)
	if err != nil {
		return 0, p.errorf("%s %.20q: %v", what, tok, err)
	}
	return v, nil
}

// quoted reads a double-quoted name, which may hold blanks but not span
// lines.
func (p *gmshParser) quoted() (string, error) {
	name, line, err := p.s.quoted()
	p.line = line
	switch {
	case err == io.ErrUnexpectedEOF:
		return "", p.s.eofError(line, "file ends where a quoted name should be")
	case err != nil:
		return "", p.errorf("%v", err)
	}
	return name, nil
}

func (p *gmshParser) errorf(format string, args ...any) error {
	return p.s.errorf(p.line, format, args...)
}

// tagIndex maps node tags to dense ids: a slice while the tags are dense
// enough, a map once they are too sparse for that, so memory stays
// proportional to the nodes actually read whatever tags a file uses.
type tagIndex struct {
	dense  []int32 // dense[tag] = id+1, 0 when absent
	sparse map[int64]int32
}

// add records tag → id and reports false if tag was already present.
func (t *tagIndex) add(tag int64, id int32) bool {
	if t.sparse == nil && tag >= int64(len(t.dense)) && tag <= 4*int64(id)+1<<16 {
		t.dense = slices.Grow(t.dense, int(tag)+1-len(t.dense))
		t.dense = t.dense[:cap(t.dense)]
	}
	if t.sparse == nil && tag < int64(len(t.dense)) {
		if t.dense[tag] != 0 {
			return false
		}
		t.dense[tag] = id + 1
		return true
	}
	if t.sparse == nil {
		t.sparse = make(map[int64]int32, id+1)
		for tg, v := range t.dense {
			if v != 0 {
				t.sparse[int64(tg)] = v - 1
			}
		}
		t.dense = nil
	}
	if _, dup := t.sparse[tag]; dup {
		return false
	}
	t.sparse[tag] = id
	return true
}

func (t *tagIndex) get(tag int64) (int32, bool) {
	if t.sparse != nil {
		id, ok := t.sparse[tag]
		return id, ok
	}
	if tag < 0 || tag >= int64(len(t.dense)) || t.dense[tag] == 0 {
		return 0, false
	}
	return t.dense[tag] - 1, true
}

// quoted reads the next token, which must be a double-quoted string on one
// line, and returns it without the quotes.
func (s *textScanner) quoted() (string, int, error) {
	tok, line := s.token()
	if tok == nil {
		return "", line, io.ErrUnexpectedEOF
	}
	if tok[0] != '"' {
		return "", line, fmt.Errorf("name %.20q is not in double quotes", tok)
	}
	if len(tok) > 1 && tok[len(tok)-1] == '"' {
		return string(tok[1 : len(tok)-1]), line, nil
	}
	// The name holds blanks: s.pos is just past the token, so search on
	// from there for the closing quote, on this line only.
	name := string(tok[1:])
	for k := 0; ; k++ {
		if s.pos+k == s.end && !s.fill() {
			break
		}
		c := s.buf[s.pos+k]
		if c == '\n' {
			break
		}
		if c == '"' {
			name += string(s.buf[s.pos : s.pos+k])
			s.pos += k + 1
			return name, line, nil
		}
	}
	return "", line, fmt.Errorf("name %.20q has no closing quote on its line", name)
}
