// A machined part: a plate with a cylindrical boss, two through holes, a
// bore through the boss and a fillet-like rounded slot. Mesh size h is
// set from the command line: gmsh -3 -setnumber h 0.1 part.geo
SetFactory("OpenCASCADE");
DefineConstant[ h = {0.1, Name "mesh size"} ];
Box(1) = {0, 0, 0, 4, 2, 0.5};
Cylinder(2) = {2, 1, 0, 0, 0, 1.5, 0.8};
Cylinder(3) = {0.6, 1, -0.1, 0, 0, 0.7, 0.3};
Cylinder(4) = {3.4, 1, -0.1, 0, 0, 0.7, 0.3};
Cylinder(5) = {2, 1, -0.1, 0, 0, 1.7, 0.4};
Sphere(6) = {2, 1, 1.5, 0.55};
v() = BooleanUnion{ Volume{1}; Delete; }{ Volume{2}; Delete; };
w() = BooleanDifference{ Volume{v()}; Delete; }{ Volume{3, 4, 5, 6}; Delete; };
Mesh.CharacteristicLengthMax = h;
Mesh.CharacteristicLengthMin = h / 2;
// Delaunay: HXT (10) gives a different mesh on every run, even on one thread.
Mesh.Algorithm3D = 1;
Mesh.MshFileVersion = 2.2;
