// SPDX-License-Identifier: GPL-3.0-or-later

/// A `SIMD3<Double>` property stored as three `Double`s: read and written as the vector, laid out as plain scalars.
///
/// Why: Swift 6.3's compiler lays out a 32-byte vector (`SIMD3<Double>`, `SIMD4<Double>`) that an async function
/// keeps across a suspension point, inside an aggregate that also holds a reference, at one alignment and emits it
/// at another, so the function's frame outgrows the async context allocated for it and its tail overwrites the heap
/// block that follows (swiftlang/swift issue 91639; fixed for Swift 6.4 by swiftlang/llvm-project pull request
/// 14048, "Pack the frame when a spill's alignment was clamped"). In Lapse it struck where a task of the
/// stabiliser's analysis returned a ``SphereImage``/``PairMotion`` (AddressSanitizer: an 8-byte write past a task
/// allocator slab in `StopPlanner.analyseSome`; in release builds glibc aborted with "corrupted size vs.
/// prev_size" or a garbage pointer freed elsewhere, depending on what the heap held next). So no stored property of
/// Lapse's types is a 32-byte vector (`scripts/vector-fields.py`, run by `make lint`, checks it): the ones that are
/// vectors in the arithmetic are stored through this wrapper, and the arithmetic stays in `SIMD3<Double>`.
///
/// Encoded as `SIMD3<Double>` is (an array of three numbers), so a `Codable` type keeps its JSON.
@propertyWrapper
public struct StoredAsDoubles: Sendable, Hashable, Codable {
    @usableFromInline var x: Double
    @usableFromInline var y: Double
    @usableFromInline var z: Double

    /// Stores `wrappedValue`'s three components.
    @inlinable public init(wrappedValue: SIMD3<Double>) {
        (x, y, z) = (wrappedValue.x, wrappedValue.y, wrappedValue.z)
    }

    /// The vector.
    @inlinable public var wrappedValue: SIMD3<Double> {
        get { SIMD3(x, y, z) }
        set { (x, y, z) = (newValue.x, newValue.y, newValue.z) }
    }

    /// Reads the array of three numbers `SIMD3<Double>` writes.
    /// - Throws: what decoding a `SIMD3<Double>` throws.
    public init(from decoder: any Decoder) throws {
        self.init(wrappedValue: try SIMD3<Double>(from: decoder))
    }

    /// Writes the vector as `SIMD3<Double>` does.
    /// - Throws: what encoding a `SIMD3<Double>` throws.
    public func encode(to encoder: any Encoder) throws {
        try wrappedValue.encode(to: encoder)
    }
}

/// An optional `SIMD3<Double>` property stored as three `Double`s and a flag (see ``StoredAsDoubles`` for why).
@propertyWrapper
public struct OptionalStoredAsDoubles: Sendable, Hashable {
    @usableFromInline var stored: StoredAsDoubles?

    /// Stores `wrappedValue`'s components, or nothing.
    @inlinable public init(wrappedValue: SIMD3<Double>?) {
        stored = wrappedValue.map(StoredAsDoubles.init(wrappedValue:))
    }

    /// The vector, or nil.
    @inlinable public var wrappedValue: SIMD3<Double>? {
        get { stored?.wrappedValue }
        set { stored = newValue.map(StoredAsDoubles.init(wrappedValue:)) }
    }
}
