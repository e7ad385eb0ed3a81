// bracket.geo - an L-shaped mounting bracket: a base plate with rounded
// corners and two bolt holes, an upright wall with a bearing bore, joined
// by a concave fillet along the inner edge. Units: decimetres.
//   gmsh -3 bracket.geo -setnumber size 0.1 -format msh22 -o bracket.msh
SetFactory("OpenCASCADE");
If (!Exists(size))
  size = 0.12;
EndIf

t = 0.4;        // plate and wall thickness
r = 0.25;       // concave fillet radius between base and wall

// Base plate: 4 x 2 with rounded corners (radius 0.3), extruded to thickness t.
Rectangle(1) = {0, 0, 0, 4, 2, 0.3};
base[] = Extrude {0, 0, t} { Surface{1}; };
// Upright wall on the x = 0 edge, 2.2 high, with rounded top corners.
Rectangle(100) = {0, 0, 0, 2, 2.2, 0.3};
Rotate {{1, 0, 0}, {0, 0, 0}, Pi/2} { Surface{100}; }
Rotate {{0, 0, 1}, {0, 0, 0}, Pi/2} { Surface{100}; }
wall[] = Extrude {t, 0, 0} { Surface{100}; };
// The concave fillet: a square prism less a quarter cylinder, along y.
Box(10) = {t, 0, t, r, 2, r};
Cylinder(11) = {t + r, 0, t + r, 0, 2, 0, r};
fillet() = BooleanDifference{ Volume{10}; Delete; }{ Volume{11}; Delete; };
body() = BooleanUnion{ Volume{base[1]}; Delete; }{ Volume{wall[1], fillet()}; Delete; };
// Two bolt holes through the base, a bearing bore through the wall.
Cylinder(20) = {2.6, 0.55, -0.1, 0, 0, t + 0.2, 0.22};
Cylinder(21) = {2.6, 1.45, -0.1, 0, 0, t + 0.2, 0.22};
Cylinder(22) = {3.5, 1.0, -0.1, 0, 0, t + 0.2, 0.18};
Cylinder(23) = {-0.1, 1.0, 1.4, t + 0.2, 0, 0, 0.45};
part() = BooleanDifference{ Volume{body()}; Delete; }{ Volume{20, 21, 22, 23}; Delete; };
Physical Volume("bracket", 1) = {part()};

Mesh.CharacteristicLengthMax = size;
Mesh.CharacteristicLengthMin = size / 3;
Mesh.CharacteristicLengthFromCurvature = 1;
Mesh.MinimumElementsPerTwoPi = 16;
Mesh.Optimize = 1;
