//! SST ingestion (filled in below).
