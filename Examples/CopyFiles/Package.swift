// swift-tools-version: 6.2
// Copying with Sluice's `Copier` on the public library alone: a package of its own, with a path
// dependency on the root, so that it can use nothing but the public surface.
import PackageDescription

let package = Package(
    name: "CopyFiles",
    dependencies: [.package(name: "Sluice", path: "../..")],
    targets: [
        .executableTarget(name: "CopyFiles", dependencies: [.product(name: "Sluice", package: "Sluice")])
    ],
    swiftLanguageModes: [.v6]
)
