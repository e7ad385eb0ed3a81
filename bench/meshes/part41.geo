// bench/amg/part.geo (a plate with a boss, a bore, two through holes and
// a spherical pocket: holes and curved faces), saved in the format
// mesh.ReadGmsh reads: MSH 4.1 ASCII.
Include "../amg/part.geo";
Mesh.MshFileVersion = 4.1;
Mesh.Binary = 0;
