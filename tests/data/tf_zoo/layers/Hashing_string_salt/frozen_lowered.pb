
;
xPlaceholder*
dtype0*
shape:ÿÿÿÿÿÿÿÿÿ
x
(zoo_hashing_string_salt_1/hashing_1/hashStringToHashBucketStrongx"/device:CPU:0*
key
***
num_buckets
G
IdentityIdentity(zoo_hashing_string_salt_1/hashing_1/hash*
T0	"ª