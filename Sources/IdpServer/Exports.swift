// What a test that sets up the in-process IDP always uses with it: the clock it is configured with
// (`ManualClock`, IdpPrimitives) and the network the documented constructors find it in
// (`IdpNetwork`, `Transport`, IdpWireFormats). Importing IdpServer brings both modules.
@_exported import IdpPrimitives
@_exported import IdpWireFormats
