
C
xPlaceholder*$
shape:ÿÿÿÿÿÿÿÿÿ*
dtype0
œ
2zoo_averagepooling2d_1/average_pooling2d_1/AvgPoolAvgPoolx*
ksize
*
data_formatNHWC*
strides
*
paddingVALID*
T0
Q
IdentityIdentity2zoo_averagepooling2d_1/average_pooling2d_1/AvgPool*
T0"ª