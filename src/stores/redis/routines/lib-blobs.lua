-- lib-blobs.lua: the keys of the `blobs` sub-port (small content-addressed objects; the inline
-- tier of the artifact store). A new key family: layout 5 stores simply have none yet.
--
-- Keys (P = KEYS[1])
--   P..'blob:'..ref   hash  bytes (binary), mediaType (the first put's), size (decimal text),
--                           modifiedAt (the last put, ms). bytes and mediaType never change.
--   P..'blobs'        zset  every blob ref, score 0 (lexicographic = sorted by ref)

local function k_blob(ref) return P .. 'blob:' .. ref end
local function k_blobs() return P .. 'blobs' end
