package mesh

import (
	"math"

	"github.com/misgrid/misgrid/internal/option"
)

// The key=value text forms of MatrixOptions, ElementOptions and
// ClassifyOptions, for the command line and the C ABI. Each key is
// declared once here; mis and amg have registries of their own, and the
// command line and the C ABI compose the three.

// DefaultFeatureAngle is the feature angle, in degrees, of a zero
// ClassifyOptions.FeatureAngle.
const DefaultFeatureAngle = 30.0

// OptionInfo documents one key of the option registries.
type OptionInfo = option.Info

var matrixKeys = &option.Registry[MatrixOptions]{
	Pkg: "mesh",
	Keys: []option.Key[MatrixOptions]{
		// θ ≥ 1 would drop every coupling of a positive definite matrix:
		// the key takes what amg's theta takes.
		option.Float("theta", "strength threshold: keep a_ij when |a_ij| > theta·sqrt(|a_ii a_jj|) (needs values)", "number in [0,1)",
			func(x float64) bool { return x >= 0 && x < 1 }, func(o *MatrixOptions) *float64 { return &o.Theta }),
		option.Int("block_size", "dofs per vertex: rows i·b..i·b+b−1 collapse into vertex i", 1, math.MaxInt32,
			func(o *MatrixOptions) *int { return &o.BlockSize }),
	},
	Renamed: map[string]string{"block": "block_size"},
}

var elementKeys = &option.Registry[ElementOptions]{
	Pkg: "mesh",
	Keys: []option.Key[ElementOptions]{
		option.Bool("vertex_only", "connect only the corner nodes of second-order elements",
			func(o *ElementOptions) *bool { return &o.VertexOnly }),
	},
}

var classifyKeys = &option.Registry[ClassifyOptions]{
	Pkg: "mesh",
	Keys: []option.Key[ClassifyOptions]{
		option.Float("feature_angle", "degrees under which two boundary normals count as one direction", "number in (0, 180]",
			func(x float64) bool { return x > 0 && x <= 180 }, func(o *ClassifyOptions) *float64 { return &o.FeatureAngle }),
	},
	Renamed: map[string]string{"feature-angle": "feature_angle"},
}

func init() {
	matrixKeys.SetDefaults(MatrixOptions{BlockSize: 1})
	elementKeys.SetDefaults(ElementOptions{})
	classifyKeys.SetDefaults(ClassifyOptions{FeatureAngle: DefaultFeatureAngle})
}

// MatrixOptionKeys lists the keys of MatrixOptions.Set.
func MatrixOptionKeys() []OptionInfo { return matrixKeys.Infos() }

// ElementOptionKeys lists the keys of ElementOptions.Set.
func ElementOptionKeys() []OptionInfo { return elementKeys.Infos() }

// ClassifyOptionKeys lists the keys of ClassifyOptions.Set.
func ClassifyOptionKeys() []OptionInfo { return classifyKeys.Infos() }

// Set changes the option named key from its text form. A bad value is
// refused with an error that names the key, and o is left as it was.
func (o *MatrixOptions) Set(key, value string) error { return matrixKeys.Set(o, key, value) }

// Set changes the option named key from its text form.
func (o *ElementOptions) Set(key, value string) error { return elementKeys.Set(o, key, value) }

// Set changes the option named key from its text form.
func (o *ClassifyOptions) Set(key, value string) error { return classifyKeys.Set(o, key, value) }
